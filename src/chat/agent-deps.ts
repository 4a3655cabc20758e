import type { AppContext } from '../context.ts';
import type { AgentDeps, ResolvedModel } from '../agent/types.ts';
import { providerFor, type LlmRegistry } from '../providers/llm/registry.ts';
import { outboundOf } from '../net/outbound/index.ts';

/** The model used when an assistant names none usable for text (realtime-only assistants). */
export const DEFAULT_CHAT_MODEL_ID = 1;

/** Wires the agent to the store and catalog of one engine; custom tools go out through the outbound guard. */
export function agentDeps(ctx: AppContext, llm: LlmRegistry, fetchImpl: typeof fetch = outboundOf(ctx).fetch): AgentDeps {
  const resolve = (id: number): ResolvedModel | undefined => {
    const m = ctx.catalog.llmModel(id);
    const provider = m && providerFor(llm, m.provider);
    return m && provider ? { provider, model: m.model } : undefined;
  };
  return {
    resolveModel: (id) => (id != null ? resolve(id) : undefined) ?? resolve(DEFAULT_CHAT_MODEL_ID) ?? firstModel(ctx, llm),
    async customTools(accountId, ids) {
      const tools = await ctx.repos.tools.getMany(accountId, ids);
      return tools.map((t) => ({
        id: t.id,
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        endpoint: t.endpoint,
        method: t.method,
        headers: t.headers,
        timeout_ms: t.timeoutMs,
      }));
    },
    async searchKnowledge(accountId, kbId, query, limit) {
      const hits = await ctx.repos.knowledgeBases.search(accountId, kbId, query, limit);
      if (hits.length === 0) return [];
      // FTS snippets are a few words; the model answers better from the passage itself.
      const docs = await ctx.store.db
        .selectFrom('kb_documents')
        .select(['id', 'content'])
        .where('account_id', '=', accountId)
        .where('id', 'in', hits.map((h) => h.document_id))
        .execute();
      const content = new Map(docs.map((d) => [d.id, d.content]));
      return hits.map((h) => ({ title: h.title, content: passage(content.get(h.document_id) ?? h.snippet), score: h.score }));
    },
    languageName(id) {
      const l = ctx.catalog.language(id);
      return l ? `${l.name} (${l.code})` : undefined;
    },
    fetch: fetchImpl,
  };
}

const MAX_PASSAGE_CHARS = 2_000;

function passage(text: string): string {
  return text.length > MAX_PASSAGE_CHARS ? `${text.slice(0, MAX_PASSAGE_CHARS)}…` : text;
}

function firstModel(ctx: AppContext, llm: LlmRegistry): ResolvedModel | undefined {
  for (const m of ctx.catalog.llmModels()) {
    const provider = providerFor(llm, m.provider);
    if (provider) return { provider, model: m.model };
  }
  return undefined;
}
