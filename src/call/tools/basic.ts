/**
 * end_call, dtmf_input and collect_keypad as functions for the model. Argument checks happen
 * here, before anything touches the call: a malformed model call gets an `{error}` result it
 * can correct, never a half-sent digit string.
 */
import type { BuiltinToolInput } from '../../assistants/tools.ts';
import type { AgentTool } from '../../agent/types.ts';
import type { CallControl } from './control.ts';

type Of<K extends BuiltinToolInput['type']> = Extract<BuiltinToolInput, { type: K }>;

export const END_CALL_TOOL = 'end_call';
export const DTMF_TOOL = 'send_dtmf';
export const KEYPAD_TOOL = 'collect_keypad';

/** RFC 4733 events 0–15: digits, star, pound and the A–D column. */
export const DTMF_DIGITS = /^[0-9*#A-D]{1,64}$/;

const when = (description: string | null, fallback: string) => (description ? `${fallback} ${description}` : fallback);

export function endCallTool(tool: Of<'end_call'>, control: CallControl): AgentTool {
  return {
    spec: {
      name: END_CALL_TOOL,
      description: when(tool.description, 'End the phone call. Say goodbye in the same reply; the call ends once you finish speaking.'),
      parameters: {
        type: 'object',
        properties: { reason: { type: 'string', description: 'Why the call is ending, in a few words (for the call record).' } },
      },
    },
    // The agent treats the conversation as over after this tool; the BYE waits for the
    // goodbye sentence, which is why hangUp(afterSpeech=true).
    ends: true,
    async run(args) {
      await control.hangUp(true);
      return { ended: true, ...(typeof args.reason === 'string' && args.reason ? { reason: args.reason.slice(0, 200) } : {}) };
    },
  };
}

export function dtmfInputTool(tool: Of<'dtmf_input'>, control: CallControl): AgentTool {
  return {
    spec: {
      name: DTMF_TOOL,
      description: when(tool.description, 'Press keys on the phone keypad, for example to navigate an automated phone menu (IVR).'),
      parameters: {
        type: 'object',
        properties: {
          digits: {
            type: 'string',
            pattern: '^[0-9*#A-Da-d]{1,64}$',
            description: 'Keys to press in order: 0-9, * and #, e.g. "1" or "1234#".',
          },
        },
        required: ['digits'],
      },
    },
    async run(args) {
      const raw = typeof args.digits === 'string' ? args.digits : typeof args.digits === 'number' ? String(args.digits) : '';
      // Models like to space digits out ("1 2 3"): spacing and dashes carry no key.
      const digits = raw.replace(/[\s-]/g, '').toUpperCase();
      if (!DTMF_DIGITS.test(digits)) return { error: 'Invalid arguments: digits must be 1 to 64 keys of 0-9, *, # or A-D.' };
      await control.sendDtmf(digits);
      return { sent: digits };
    },
  };
}

export function collectKeypadTool(tool: Of<'collect_keypad'>, control: CallControl): AgentTool {
  const stop = tool.stop_key;
  return {
    spec: {
      name: KEYPAD_TOOL,
      description: when(
        tool.description,
        `Collect digits the caller types on their keypad (a PIN, an account or order number). Ask them first to type it and finish with ${stop === '#' ? 'the pound key (#)' : 'the star key (*)'}. The digits come back to you only; do not read them aloud unless needed.`,
      ),
      parameters: {
        type: 'object',
        properties: { max_digits: { type: 'integer', minimum: 1, maximum: 64, description: 'Stop after this many digits, if the length is known.' } },
      },
    },
    async run(args, signal) {
      let maxDigits: number | undefined;
      if (args.max_digits !== undefined && args.max_digits !== null) {
        const n = Number(args.max_digits);
        if (!Number.isInteger(n) || n < 1 || n > 64) return { error: 'Invalid arguments: max_digits must be an integer from 1 to 64.' };
        maxDigits = n;
      }
      const got = await control.collectDigits({ stopKey: stop, timeoutMs: tool.timeout * 1000, ...(maxDigits !== undefined && { maxDigits }) }, signal);
      if (got.digits === '') return { digits: '', ended_by: got.endedBy, note: 'The caller pressed no keys.' };
      return { digits: got.digits, ended_by: got.endedBy };
    },
  };
}
