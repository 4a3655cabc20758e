import { builtinToolSchema } from '../assistants/tools.ts';
import type { AgentTool } from '../agent/types.ts';
import { calendarTools } from '../call/tools/calendar.ts';
import type { AppContext } from '../context.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Conversation } from '../store/repos/conversations.ts';
import { outboundOf } from '../net/outbound/index.ts';

/**
 * The assistant's built-in tools that mean something in a text chat, besides `end_call` (offered
 * by the agent as `end_conversation`): calendar booking, as `check_availability` and
 * `book_meeting`. Transfers, DTMF and keypad need a phone call and are not offered. A stored tool
 * that no longer parses is skipped rather than offered half-configured.
 */
export function textBuiltinTools(ctx: AppContext, assistant: AssistantRecord, conv: Conversation, fetchImpl: typeof fetch = outboundOf(ctx).fetch): AgentTool[] {
  const out: AgentTool[] = [];
  for (const raw of assistant.config.tools ?? []) {
    if (raw.type !== 'calendar_booking') continue;
    const parsed = builtinToolSchema.safeParse({ ...(raw.data ?? {}), type: raw.type });
    if (!parsed.success || parsed.data.type !== 'calendar_booking') {
      ctx.logger.warn({ assistantId: assistant.id, type: raw.type }, 'stored built-in tool no longer valid; not offered');
      continue;
    }
    out.push(
      ...calendarTools(parsed.data, {
        clock: ctx.clock,
        timeZone: assistant.config.timezone ?? 'UTC',
        callerNumber: conv.customerPhone,
        openSecret: (sealed) => ctx.secrets.open(sealed),
        fetch: fetchImpl,
      }),
    );
  }
  return out;
}
