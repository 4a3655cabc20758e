/**
 * call_transfer, warm_call_transfer and assistant_transfer as functions for the model.
 *
 * These tools are `ends: true`: after a transfer the assistant is out of the call. A transfer
 * that did not happen returns `{error}` (the agent then keeps the conversation going, see
 * run-turn.ts) with words the model can relay to the caller.
 *
 * call_transfer's `timezone` says when the transfer target is reachable. The spec gives no hours,
 * so Switchboard uses business hours: Monday–Friday 09:00–17:00 in that zone (TRANSFER_HOURS).
 * Outside them the model is told so and the call is not touched.
 */
import type { BuiltinToolInput } from '../../assistants/tools.ts';
import type { AgentTool } from '../../agent/types.ts';
import { withinCallingHours, type CallingHours } from '../../campaigns/calling-hours.ts';
import type { Clock } from '../../util/clock.ts';
import type { CallControl } from './control.ts';

type Of<K extends BuiltinToolInput['type']> = Extract<BuiltinToolInput, { type: K }>;

export const TRANSFER_TOOL = 'transfer_call';
export const WARM_TRANSFER_TOOL = 'warm_transfer_call';
export const assistantTransferToolName = (assistantId: number) => `transfer_to_assistant_${assistantId}`;

export const TRANSFER_HOURS: Readonly<Omit<CallingHours, 'timezone'>> = Object.freeze({ start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5] });
export const DEFAULT_WARM_TRANSFER_MESSAGE = 'Please hold while I transfer your call.';

/** A number a trunk can dial (digits, optional +, 3–15 digits once separators go) or a sip: URI. */
export function normalizeDialable(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim();
  if (/^sips?:[^\s@]+(@[^\s]+)?$/i.test(s)) return s;
  const compact = s.replace(/[\s().-]/g, '');
  return /^\+?\d{3,15}$/.test(compact) ? compact : undefined;
}

export interface TransferToolDeps {
  control: CallControl;
  clock: Clock;
  /** Override of TRANSFER_HOURS (tests, or a future per-tool setting). */
  hours?: Omit<CallingHours, 'timezone'>;
}

const reasonProp = { reason: { type: 'string', description: 'Why the caller needs the transfer, in one sentence.' } };
const text = (v: unknown, max: number) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined);

export function callTransferTool(tool: Of<'call_transfer'>, deps: TransferToolDeps): AgentTool {
  const properties: Record<string, unknown> = { ...reasonProp };
  if (tool.custom) {
    properties.phone_number = {
      type: 'string',
      description: `The number to transfer to, in international format (e.g. +14155550123). Leave it out to use the default number ${tool.phone_number}.`,
    };
  }
  const base = 'Transfer the caller to another phone number (a human colleague).';
  return {
    spec: {
      name: TRANSFER_TOOL,
      description: tool.description ? `${base} ${tool.description}` : base,
      parameters: { type: 'object', properties },
    },
    ends: true,
    async run(args) {
      let target = tool.phone_number;
      if (tool.custom && args.phone_number !== undefined && args.phone_number !== null && args.phone_number !== '') {
        const chosen = normalizeDialable(args.phone_number);
        if (!chosen) return { error: 'Invalid arguments: phone_number must be a phone number in international format (+ and 3 to 15 digits) or a sip: address.' };
        target = chosen;
      }
      if (tool.timezone && !withinCallingHours({ ...(deps.hours ?? TRANSFER_HOURS), timezone: tool.timezone }, deps.clock.now())) {
        return {
          error: 'Transfers are not available right now: the team is outside business hours. Offer to help or take a message instead.',
          transferred: false,
          reason: 'outside-hours',
        };
      }
      if (tool.warm_transfer) await deps.control.say(tool.warm_transfer_message ?? DEFAULT_WARM_TRANSFER_MESSAGE);
      const reason = text(args.reason, 500);
      const res = await deps.control.transferBlind({ target, ...(reason && { reason }) });
      if (res.ok) return { transferred: true, method: res.method };
      return { error: `The transfer did not go through (${res.reason}). Tell the caller and keep helping them.`, transferred: false, reason: res.reason };
    },
  };
}

export function warmCallTransferTool(tool: Of<'warm_call_transfer'>, deps: TransferToolDeps): AgentTool {
  const base = 'Transfer the caller to a supervisor: the caller is put on hold while the supervisor is briefed, then connected.';
  return {
    spec: {
      name: WARM_TRANSFER_TOOL,
      description: `${base} ${tool.description}`,
      parameters: {
        type: 'object',
        properties: {
          ...reasonProp,
          summary: { type: 'string', description: 'Who is calling, what they want and why a human is needed, in 2-3 sentences.' },
        },
        required: ['reason'],
      },
    },
    ends: true,
    async run(args) {
      const reason = text(args.reason, 500);
      if (!reason) return { error: 'Invalid arguments: reason is required.' };
      const res = await deps.control.transferWarm({
        supervisor: tool.supervisor_phone,
        customSip: tool.custom_sip,
        outboundPhoneId: tool.outbound_phone_id,
        callerIdMode: tool.caller_id_mode,
        customCallerId: tool.caller_id_mode === 'custom' ? tool.custom_caller_id : null,
        holdMessage: tool.hold_message,
        holdMusic: tool.hold_music,
        holdMusicVolume: tool.hold_music_volume,
        briefingInitialMessage: tool.briefing_initial_message,
        summaryInstructions: tool.summary_instructions,
        reason,
        modelSummary: text(args.summary, 2000) ?? null,
        connectedMessage: tool.connected_message,
      });
      if (res.outcome === 'accepted') return { transferred: true };
      const why = res.outcome === 'refused' ? 'declined the call' : res.outcome === 'no-answer' ? 'did not answer' : 'could not be reached';
      return { error: `The supervisor ${why}. Apologise to the caller and keep helping them.`, transferred: false, outcome: res.outcome };
    },
  };
}

export function assistantTransferTool(tool: Of<'assistant_transfer'>, deps: Pick<TransferToolDeps, 'control'>): AgentTool {
  return {
    spec: {
      name: assistantTransferToolName(tool.assistant_id),
      description: tool.description,
      parameters: { type: 'object', properties: { ...reasonProp } },
    },
    ends: true,
    async run() {
      if (tool.message_before_transfer) await deps.control.say(tool.message_before_transfer);
      const announced = tool.message_before_transfer ?? undefined;
      await deps.control.swapAssistant(tool.assistant_id, { speakGreeting: tool.speak_transfer_greeting, ...(announced ? { announced } : {}) });
      return { transferred: true, assistant_id: tool.assistant_id };
    },
  };
}
