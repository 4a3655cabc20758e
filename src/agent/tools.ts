import { defaultOutbound } from '../net/outbound/index.ts';
import { httpTool, toolName } from './http-tool.ts';
import type { AgentAssistant, AgentDeps, AgentTool, KbPassage } from './types.ts';

export const KB_SEARCH_TOOL = 'search_knowledge_base';
export const END_CONVERSATION_TOOL = 'end_conversation';
const KB_RESULTS = 4;

/**
 * The functions offered to the model for one turn: custom HTTP tools, knowledge search in
 * `function_call` mode, and the built-ins that mean something in the channel. Voice-only built-ins
 * (transfers, DTMF, keypad) are added by the voice session through `extraTools`.
 */
export async function buildTools(
  assistant: AgentAssistant,
  deps: AgentDeps,
  channel: 'text' | 'voice',
  extra: AgentTool[] = [],
): Promise<Map<string, AgentTool>> {
  const tools = new Map<string, AgentTool>();
  const add = (tool: AgentTool) => {
    let name = tool.spec.name;
    for (let i = 2; tools.has(name); i++) name = `${tool.spec.name.slice(0, 60)}_${i}`;
    tools.set(name, { ...tool, spec: { ...tool.spec, name } });
  };
  const cfg = assistant.config;
  if (kbMode(assistant) === 'function_call' && cfg.knowledgebase_id != null) {
    add(kbSearchTool(assistant.accountId, cfg.knowledgebase_id, deps));
  }
  if (channel === 'text') {
    const endCall = (cfg.tools ?? []).find((t) => t.type === 'end_call');
    if (endCall) {
      const description = typeof endCall.data?.description === 'string' && endCall.data.description ? endCall.data.description : '';
      add({
        spec: {
          name: END_CONVERSATION_TOOL,
          description: `End this conversation once it is complete. ${description}`.trim(),
          parameters: { type: 'object', properties: {} },
        },
        ends: true,
        run: async () => ({ ended: true }),
      });
    }
  }
  for (const tool of extra) add(tool);
  const ids = cfg.tool_ids ?? [];
  if (ids.length > 0) {
    const fetchImpl = deps.fetch ?? defaultOutbound().fetch;
    for (const def of await deps.customTools(assistant.accountId, ids)) add(httpTool(def, toolName(def.name), fetchImpl));
  }
  return tools;
}

/** `function_call` unless the assistant asked for `prompt` (the spec's default for realtime modes). */
export function kbMode(assistant: AgentAssistant): 'prompt' | 'function_call' {
  return assistant.config.knowledgebase_mode === 'prompt' ? 'prompt' : 'function_call';
}

function kbSearchTool(accountId: number, kbId: number, deps: AgentDeps): AgentTool {
  return {
    spec: {
      name: KB_SEARCH_TOOL,
      description: 'Search the knowledge base for passages that answer the customer.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'What to look for, in a few words.' } },
        required: ['query'],
      },
    },
    async run(args) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return { error: 'Invalid arguments: query is required' };
      const found: KbPassage[] = await deps.searchKnowledge(accountId, kbId, query, KB_RESULTS);
      return { passages: found.map((p) => ({ title: p.title, content: p.content })) };
    },
  };
}
