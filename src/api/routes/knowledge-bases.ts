import { z } from 'zod';
import { idParams, pathId, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { KbDocumentInfo, KnowledgeBase } from '../../store/repos/knowledge-bases.ts';
import { iso } from '../../store/json.ts';
import { NotFoundError } from '../../util/errors.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

/**
 * Document content is plain text up to 1 000 000 characters; the whole request body is capped
 * at 1 MiB by the app, so a document near the limit must be mostly ASCII. Larger sources are
 * added as several documents (which also gives the search finer hits).
 */
const MAX_CONTENT_CHARS = 1_000_000;

const createBody = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).nullish(),
});

const documentParams = z.object({ id: pathId, document_id: pathId });

const documentBody = z.object({
  title: z.string().trim().min(1).max(255),
  content: z.string().min(1).max(MAX_CONTENT_CHARS),
});

const kbView = z.object({
  id: z.int(),
  name: z.string(),
  description: z.string().nullable(),
  document_count: z.int(),
  created_at: timestamp,
});
const docView = z.object({
  id: z.int(),
  knowledge_base_id: z.int(),
  title: z.string(),
  length: z.int().meta({ description: 'Characters of content' }),
  created_at: timestamp,
});

function presentKb(kb: KnowledgeBase) {
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    document_count: kb.documentCount,
    created_at: iso(kb.createdAt),
  };
}

function presentDoc(d: KbDocumentInfo) {
  return { id: d.id, knowledge_base_id: d.knowledgeBaseId, title: d.title, length: d.length, created_at: iso(d.createdAt) };
}

export function registerKnowledgeBaseRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Knowledge Bases'];
  const own = async (accountId: number, id: number) => {
    const kb = await ctx.repos.knowledgeBases.get(accountId, id);
    if (!kb) throw new NotFoundError('Knowledge base');
    return kb;
  };
  api.route({
    method: 'POST',
    url: '/user/knowledge-bases',
    summary: 'Create a knowledge base',
    tags,
    body: createBody,
    status: 201,
    response: withData(kbView),
    async handler({ body, accountId }) {
      const kb = await ctx.repos.knowledgeBases.create(accountId, body.name, body.description ?? null);
      return { message: 'Knowledge base created successfully', data: presentKb(kb) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/knowledge-bases',
    summary: 'List knowledge bases',
    tags,
    response: z.array(kbView),
    async handler({ accountId }) {
      return (await ctx.repos.knowledgeBases.list(accountId)).map(presentKb);
    },
  });
  api.route({
    method: 'GET',
    url: '/user/knowledge-bases/:id',
    summary: 'Get a knowledge base with its documents (titles and sizes)',
    tags,
    params: idParams,
    response: kbView.extend({ documents: z.array(docView) }),
    async handler({ params, accountId }) {
      const kb = await own(accountId, params.id);
      const documents = await ctx.repos.knowledgeBases.listDocuments(accountId, kb.id);
      return { ...presentKb(kb), documents: documents.map(presentDoc) };
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/knowledge-bases/:id',
    summary: 'Delete a knowledge base and its documents',
    tags,
    params: idParams,
    response: messageOnly,
    async handler({ params, accountId }) {
      if (!(await ctx.repos.knowledgeBases.delete(accountId, params.id))) throw new NotFoundError('Knowledge base');
      return { message: 'Knowledge base deleted successfully' };
    },
  });
  api.route({
    method: 'POST',
    url: '/user/knowledge-bases/:id/documents',
    summary: 'Add a text document to a knowledge base',
    tags,
    params: idParams,
    body: documentBody,
    status: 201,
    response: withData(docView),
    async handler({ params, body, accountId }) {
      const kb = await own(accountId, params.id);
      const doc = await ctx.repos.knowledgeBases.addDocument(accountId, kb.id, body.title, body.content);
      return { message: 'Document added successfully', data: presentDoc(doc) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/knowledge-bases/:id/documents/:document_id',
    summary: 'Get a document with its content',
    tags,
    params: documentParams,
    response: docView.extend({ content: z.string() }),
    async handler({ params, accountId }) {
      const kb = await own(accountId, params.id);
      const doc = await ctx.repos.knowledgeBases.getDocument(accountId, kb.id, params.document_id);
      if (!doc) throw new NotFoundError('Document');
      return { ...presentDoc(doc), content: doc.content };
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/knowledge-bases/:id/documents/:document_id',
    summary: 'Delete a document from a knowledge base',
    tags,
    params: documentParams,
    response: messageOnly,
    async handler({ params, accountId }) {
      const kb = await own(accountId, params.id);
      if (!(await ctx.repos.knowledgeBases.deleteDocument(accountId, kb.id, params.document_id))) throw new NotFoundError('Document');
      return { message: 'Document deleted successfully' };
    },
  });
}
