import type { LlmProvider, LlmToolSpec } from '../providers/llm/types.ts';

/**
 * The part of an assistant the agent reads. R1's AssistantRecord satisfies it structurally:
 * `config` holds the creation fields in snake_case, as the API accepted them.
 */
export interface AgentAssistantConfig {
  system_prompt?: string;
  initial_message?: string;
  llm_model_id?: number | null;
  chat_llm_fallback_id?: number | null;
  llm_temperature?: number;
  variables?: Record<string, unknown> | null;
  tools?: { type: string; data?: Record<string, unknown> }[];
  tool_ids?: number[];
  knowledgebase_id?: number | null;
  knowledgebase_mode?: string | null;
  language_id?: number;
  secondary_language_ids?: number[];
  timezone?: string;
  conversation_inactivity_timeout?: number;
  conversation_ended_retrigger?: boolean;
  conversation_ended_webhook_url?: string | null;
  is_webhook_active?: boolean;
  webhook_url?: string | null;
}

export interface AgentAssistant {
  id: number;
  accountId: number;
  mode: string;
  config: AgentAssistantConfig;
}

/** One message of a conversation as stored; `user` is the customer. */
export interface TurnMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Every executed tool call, reported to API clients as-is. */
export interface FunctionCallRecord {
  name: string;
  arguments: Record<string, unknown>;
  result: Record<string, unknown>;
}

export interface CustomToolDef {
  id: number;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  endpoint: string;
  method: string;
  headers: Record<string, string>;
  timeout_ms: number;
}

export interface KbPassage {
  title: string;
  content: string;
  score?: number;
}

export interface ResolvedModel {
  provider: LlmProvider;
  model: string;
}

/** A function offered to the model. `ends` marks tools after which the conversation is over. */
export interface AgentTool {
  spec: LlmToolSpec;
  run(args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Record<string, unknown>>;
  ends?: boolean;
}

export interface AgentDeps {
  /** The model for a catalog id; `undefined` (or an unknown id) yields the engine's default chat model. */
  resolveModel(id: number | null | undefined): ResolvedModel | undefined;
  customTools(accountId: number, ids: readonly number[]): Promise<CustomToolDef[]>;
  searchKnowledge(accountId: number, kbId: number, query: string, limit: number): Promise<KbPassage[]>;
  languageName?(id: number): string | undefined;
  /** For custom tools' endpoints (customer URLs): the outbound guard's fetch; default: the guard without an allow-list. */
  fetch?: typeof fetch;
}

export interface TurnInput {
  assistant: AgentAssistant;
  /** The conversation so far, the new customer message last. */
  history: TurnMessage[];
  /** Conversation or call variables; they override the assistant's own. */
  variables?: Record<string, unknown> | null;
  signal?: AbortSignal;
  onToken?: (delta: string) => void;
  /** 'voice' sessions add their own built-ins (transfer, DTMF) through `extraTools`. */
  channel?: 'text' | 'voice';
  extraTools?: AgentTool[];
}

export interface TurnResult {
  reply: string;
  functionCalls: FunctionCallRecord[];
  /** A tool asked to end the conversation (text: `end_conversation`). */
  ended: boolean;
}
