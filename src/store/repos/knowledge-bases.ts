import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { unbindAssistants } from '../references.ts';
import { searchDocuments } from './kb-search.ts';

export { ftsQuery } from './kb-search.ts';

export interface KnowledgeBase {
  id: number;
  accountId: number;
  name: string;
  description: string | null;
  documentCount: number;
  createdAt: number;
}

export interface KbDocumentInfo {
  id: number;
  knowledgeBaseId: number;
  title: string;
  /** Length of the content in characters. */
  length: number;
  createdAt: number;
}

export interface KbDocument extends KbDocumentInfo {
  content: string;
}

export interface KbHit {
  document_id: number;
  title: string;
  snippet: string;
  /** Higher is better (negated FTS5 bm25 on SQLite, ts_rank on PostgreSQL). */
  score: number;
}

export class KnowledgeBasesRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async create(accountId: number, name: string, description: string | null): Promise<KnowledgeBase> {
    const createdAt = this.clock.now();
    const row = await this.store.db
      .insertInto('knowledge_bases')
      .values({ account_id: accountId, name, description, created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, accountId, name, description, documentCount: 0, createdAt };
  }

  async list(accountId: number): Promise<KnowledgeBase[]> {
    return this.query(accountId);
  }

  async get(accountId: number, id: number): Promise<KnowledgeBase | undefined> {
    return (await this.query(accountId, id))[0];
  }

  private async query(accountId: number, id?: number): Promise<KnowledgeBase[]> {
    let q = this.store.db
      .selectFrom('knowledge_bases as k')
      .select((eb) => [
        'k.id',
        'k.account_id',
        'k.name',
        'k.description',
        'k.created_at',
        eb.selectFrom('kb_documents as d').whereRef('d.knowledge_base_id', '=', 'k.id').select((e) => e.fn.countAll<number>().as('n')).as('document_count'),
      ])
      .where('k.account_id', '=', accountId);
    if (id !== undefined) q = q.where('k.id', '=', id);
    const rows = await q.orderBy('k.id').execute();
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      name: r.name,
      description: r.description,
      documentCount: Number(r.document_count ?? 0),
      createdAt: r.created_at,
    }));
  }

  /**
   * Deletes the base and its documents (explicitly, so the FTS delete trigger runs for each) and,
   * in the same transaction, clears it from every assistant's knowledgebase_id.
   */
  async delete(accountId: number, id: number): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('kb_documents').where('account_id', '=', accountId).where('knowledge_base_id', '=', id).execute();
      const res = await trx.deleteFrom('knowledge_bases').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      await unbindAssistants(trx, accountId, { knowledgeBases: new Set([id]) }, this.clock.now());
      return true;
    });
  }

  /** Adds a document; the caller has checked the base is the account's. */
  async addDocument(accountId: number, knowledgeBaseId: number, title: string, content: string): Promise<KbDocumentInfo> {
    const createdAt = this.clock.now();
    const row = await this.store.db
      .insertInto('kb_documents')
      .values({ knowledge_base_id: knowledgeBaseId, account_id: accountId, title, content, created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, knowledgeBaseId, title, length: content.length, createdAt };
  }

  async listDocuments(accountId: number, knowledgeBaseId: number): Promise<KbDocumentInfo[]> {
    const rows = await this.store.db
      .selectFrom('kb_documents')
      .select((eb) => ['id', 'knowledge_base_id', 'title', 'created_at', eb.fn<number>('length', ['content']).as('length')])
      .where('account_id', '=', accountId)
      .where('knowledge_base_id', '=', knowledgeBaseId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, knowledgeBaseId: r.knowledge_base_id, title: r.title, length: Number(r.length), createdAt: r.created_at }));
  }

  /** One document with its content, or undefined (missing, another base's or another account's). */
  async getDocument(accountId: number, knowledgeBaseId: number, id: number): Promise<KbDocument | undefined> {
    const r = await this.store.db
      .selectFrom('kb_documents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('knowledge_base_id', '=', knowledgeBaseId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && { id: r.id, knowledgeBaseId: r.knowledge_base_id, title: r.title, content: r.content, length: r.content.length, createdAt: r.created_at };
  }

  /** Deletes one document (the FTS delete trigger drops it from search); false when there is none. */
  async deleteDocument(accountId: number, knowledgeBaseId: number, id: number): Promise<boolean> {
    const res = await this.store.db
      .deleteFrom('kb_documents')
      .where('account_id', '=', accountId)
      .where('knowledge_base_id', '=', knowledgeBaseId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Full documents, for the `prompt` knowledge mode that puts the knowledge into the prompt. */
  async documents(accountId: number, knowledgeBaseId: number): Promise<KbDocument[]> {
    const rows = await this.store.db
      .selectFrom('kb_documents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('knowledge_base_id', '=', knowledgeBaseId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      knowledgeBaseId: r.knowledge_base_id,
      title: r.title,
      content: r.content,
      length: r.content.length,
      createdAt: r.created_at,
    }));
  }

  /** The knowledge search function of assistants: best documents first, never a search syntax error. */
  async search(accountId: number, knowledgeBaseId: number, query: string, limit = 5): Promise<KbHit[]> {
    return searchDocuments(this.store, accountId, knowledgeBaseId, query, Math.max(1, Math.min(50, Math.floor(limit))));
  }
}
