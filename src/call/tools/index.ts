/**
 * The voice built-ins for one call: each of the assistant's stored `{type, data}` tools becomes
 * one AgentTool (two for the calendar), handed to the agent as `extraTools`. Stored data is
 * re-read through the creation schema so defaults apply to records written before a field
 * existed; a tool that no longer parses is skipped (and reported), not offered half-configured.
 */
import { builtinToolSchema } from '../../assistants/tools.ts';
import type { AgentTool } from '../../agent/types.ts';
import type { Clock } from '../../util/clock.ts';
import { collectKeypadTool, dtmfInputTool, endCallTool } from './basic.ts';
import { calendarTools, type CalendarToolDeps } from './calendar.ts';
import type { CallControl } from './control.ts';
import { assistantTransferTool, callTransferTool, warmCallTransferTool } from './transfer.ts';

export type { CallControl } from './control.ts';
export * from './control.ts';
export { KeypadCollector } from './keypad.ts';

export interface VoiceToolDeps {
  control: CallControl;
  clock: Clock;
  /** The assistant's time zone (calendar default). */
  timeZone?: string;
  callerNumber?: string | null;
  calendar?: Pick<CalendarToolDeps, 'openSecret' | 'fetch' | 'timeoutMs' | 'client'>;
  /** A stored tool that failed to parse: its type and the first problem. */
  onInvalid?: (type: string, problem: string) => void;
}

export function buildVoiceTools(stored: ReadonlyArray<{ type: string; data?: Record<string, unknown> }>, deps: VoiceToolDeps): AgentTool[] {
  const out: AgentTool[] = [];
  for (const raw of stored) {
    const parsed = builtinToolSchema.safeParse({ ...(raw.data ?? {}), type: raw.type });
    if (!parsed.success) {
      deps.onInvalid?.(raw.type, parsed.error.issues[0]?.message ?? 'invalid');
      continue;
    }
    const t = parsed.data;
    switch (t.type) {
      case 'end_call':
        out.push(endCallTool(t, deps.control));
        break;
      case 'dtmf_input':
        out.push(dtmfInputTool(t, deps.control));
        break;
      case 'collect_keypad':
        out.push(collectKeypadTool(t, deps.control));
        break;
      case 'call_transfer':
        out.push(callTransferTool(t, deps));
        break;
      case 'warm_call_transfer':
        out.push(warmCallTransferTool(t, deps));
        break;
      case 'assistant_transfer':
        out.push(assistantTransferTool(t, deps));
        break;
      case 'calendar_booking':
        out.push(...calendarTools(t, { clock: deps.clock, timeZone: deps.timeZone ?? 'UTC', callerNumber: deps.callerNumber ?? null, ...deps.calendar }));
        break;
    }
  }
  return out;
}
