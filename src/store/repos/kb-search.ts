/**
 * Knowledge-base full-text search, per backend: FTS5 with bm25 on SQLite, a weighted tsvector
 * with ts_rank on PostgreSQL. Both take the same words (`searchTerms`), match documents sharing
 * any of them, weigh title matches double, and return the best first with a short snippet.
 */
import { sql } from 'kysely';
import type { Store } from '../db.ts';

/** At most this many query terms reach the search; longer questions add noise, not recall. */
const MAX_TERMS = 32;

/** The distinct lower-cased words of free user text (letters, digits, underscore). */
export function searchTerms(text: string): string[] {
  const words = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words.map((w) => w.toLowerCase()))].slice(0, MAX_TERMS);
}

/**
 * Turns free user text into an FTS5 query that cannot be a syntax error: every word becomes a
 * quoted string (FTS5 operators, column filters and stray quotes lose their meaning), joined
 * with OR so a natural question finds documents sharing any of its words; bm25 ranks those
 * sharing more and rarer words first. Empty when the text has no words.
 */
export function ftsQuery(text: string): string {
  return searchTerms(text)
    .map((w) => `"${w}"`)
    .join(' OR ');
}

export interface RawHit {
  document_id: number;
  title: string;
  snippet: string;
  /** Higher is better. */
  score: number;
}

export async function searchDocuments(store: Store, accountId: number, kbId: number, text: string, limit: number): Promise<RawHit[]> {
  return store.dialect === 'postgres' ? searchPostgres(store, accountId, kbId, text, limit) : searchSqlite(store, accountId, kbId, text, limit);
}

async function searchSqlite(store: Store, accountId: number, kbId: number, text: string, limit: number): Promise<RawHit[]> {
  const match = ftsQuery(text);
  if (!match) return [];
  // Title matches weigh double: a document titled after the question is usually the answer.
  const res = await sql<{ document_id: number; title: string; snippet: string; rank: number }>`
    SELECT d.id AS document_id, d.title AS title,
           snippet(kb_fts, 1, '', '', '…', 32) AS snippet, bm25(kb_fts, 2.0, 1.0) AS rank
    FROM kb_fts JOIN kb_documents d ON d.id = kb_fts.rowid
    WHERE kb_fts MATCH ${match} AND d.account_id = ${accountId} AND d.knowledge_base_id = ${kbId}
    ORDER BY rank LIMIT ${limit}`.execute(store.db);
  return res.rows.map((r) => ({ document_id: r.document_id, title: r.title, snippet: r.snippet, score: -r.rank }));
}

async function searchPostgres(store: Store, accountId: number, kbId: number, text: string, limit: number): Promise<RawHit[]> {
  const terms = searchTerms(text);
  if (terms.length === 0) return [];
  // Each word is quoted as one lexeme (words hold only letters, digits and underscores, so no
  // quote or operator of the user's reaches to_tsquery), ORed like the FTS5 query.
  // Weights {D, C, B, A}: content (B) 0.5, title (A) 1.0, so title matches weigh double.
  const query = terms.map((t) => `'${t}'`).join(' | ');
  const res = await sql<{ document_id: number; title: string; snippet: string; score: number }>`
    WITH tq AS (SELECT to_tsquery('simple', ${query}) AS query)
    SELECT d.id AS document_id, d.title AS title,
           ts_headline('simple', d.content, tq.query, 'StartSel="", StopSel="", MaxWords=32, MinWords=12, ShortWord=1, FragmentDelimiter=…, MaxFragments=1') AS snippet,
           ts_rank(ARRAY[0.1, 0.2, 0.5, 1.0]::float4[], d.search, tq.query) AS score
    FROM kb_documents d, tq
    WHERE d.search @@ tq.query AND d.account_id = ${accountId} AND d.knowledge_base_id = ${kbId}
    ORDER BY score DESC, d.id LIMIT ${limit}`.execute(store.db);
  return res.rows.map((r) => ({ document_id: r.document_id, title: r.title, snippet: r.snippet, score: Number(r.score) }));
}
