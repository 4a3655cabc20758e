/**
 * The chat-completion provider interface shared by text chats and voice calls. Kept small and
 * vendor-neutral so another protocol (or a stand-in) can sit behind it.
 */
export interface LlmToolCall {
  id: string;
  name: string;
  /** Raw JSON text exactly as the model produced it; the agent parses and validates it. */
  arguments: string;
}

export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface LlmToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  model: string;
  messages: LlmMessage[];
  tools?: LlmToolSpec[];
  temperature?: number;
  signal?: AbortSignal;
  /** Content deltas as they stream in (voice sessions start speaking on the first sentence). */
  onToken?: (delta: string) => void;
}

export interface LlmResult {
  content: string;
  toolCalls: LlmToolCall[];
  finishReason: string | null;
}

export interface LlmCapabilities {
  streaming: boolean;
  tools: boolean;
}

export interface LlmProvider {
  readonly label: string;
  readonly capabilities: LlmCapabilities;
  complete(request: LlmRequest): Promise<LlmResult>;
}
