import type { TurnMessage } from '../agent/types.ts';
import type { Message } from '../store/repos/messages.ts';

export interface HistoryItem {
  role: 'assistant' | 'user';
  content: string;
  function_calls?: Message['functionCalls'];
}

/**
 * The spec's history items. A human agent's messages (hand-over, WhatsApp freeform) speak for the
 * assistant, so clients and the model both see them as `assistant`.
 */
export function historyView(messages: readonly Message[]): HistoryItem[] {
  return messages.map((m) => ({
    role: m.role === 'user' ? 'user' : 'assistant',
    content: m.content,
    ...(m.functionCalls.length > 0 ? { function_calls: m.functionCalls } : {}),
  }));
}

/** What the model sees: the stored conversation plus the new customer message. */
export function turnHistory(messages: readonly Message[], newUserMessage: string | null): TurnMessage[] {
  const out: TurnMessage[] = messages
    .filter((m) => m.content.trim() !== '')
    .map((m) => ({ role: m.role === 'user' ? 'user' : 'assistant', content: m.content }));
  if (newUserMessage !== null) out.push({ role: 'user', content: newUserMessage });
  return out;
}
