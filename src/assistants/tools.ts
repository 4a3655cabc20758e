import { z } from 'zod';
import { timezone } from './primitives.ts';

/**
 * Built-in tools (elements of an assistant's `tools`): one strict schema per kind, discriminated
 * on `type`, with the spec's defaults applied. Optional fields without a default come out as null
 * so the stored `data` always has every field of its kind.
 */

export const DEFAULT_TEXTS = {
  hold_message: 'Please hold for a moment while I connect you with a colleague.',
  summary_instructions:
    'Brief the supervisor in 2-3 sentences: who is calling, why they are calling, and why a human is needed.',
  briefing_initial_message: 'Hello, I have a caller on the line who needs your help. Here is a quick summary.',
  connected_message: 'You are now connected. Thank you for holding.',
  assistant_transfer_description:
    'Transfer the caller to another assistant when their request is better handled by that assistant.',
} as const;

const text = (max: number) => z.string().min(1).max(max);
const opt = <T extends z.ZodType>(t: T) => t.nullable().default(null);
/** Digits with the usual separators, or a SIP URI: what a PSTN/SIP transfer can dial. */
const isPhone = (s: string) => /^\+?[\d\s().-]+$/.test(s) && (s.match(/\d/g)?.length ?? 0) >= 3;
const dialable = z
  .string()
  .max(255)
  .refine((s) => /^sips?:\S+$/i.test(s) || isPhone(s), {
    message: 'The phone number must be a phone number (digits, optionally +E.164) or a sip: URI.',
  });

export const callTransferSchema = z.strictObject({
  type: z.literal('call_transfer'),
  phone_number: dialable,
  description: opt(text(1000)),
  custom: z.boolean().default(false),
  timezone: opt(timezone),
  warm_transfer: z.boolean().default(false),
  warm_transfer_message: opt(text(1000)),
});

export const warmCallTransferSchema = z
  .strictObject({
    type: z.literal('warm_call_transfer'),
    // A phone number, or (custom_sip) a SIP address or internal extension: checked below.
    supervisor_phone: text(255),
    outbound_phone_id: z.int().positive(),
    description: text(1000),
    custom_sip: z.boolean().default(false),
    caller_id_mode: z.enum(['outbound_number', 'customer_number', 'custom']).default('outbound_number'),
    custom_caller_id: opt(text(64)),
    hold_music: z.enum(['hold_music', 'none']).default('hold_music'),
    hold_music_volume: z.int().min(0).max(100).default(80),
    hold_message: text(1000).default(DEFAULT_TEXTS.hold_message),
    summary_instructions: text(2000).default(DEFAULT_TEXTS.summary_instructions),
    briefing_initial_message: text(1000).default(DEFAULT_TEXTS.briefing_initial_message),
    connected_message: text(1000).default(DEFAULT_TEXTS.connected_message),
  })
  .superRefine((t, ctx) => {
    if (!t.custom_sip && !isPhone(t.supervisor_phone)) {
      ctx.addIssue({
        code: 'custom',
        path: ['supervisor_phone'],
        message: 'The supervisor phone must be a phone number unless custom_sip is true.',
      });
    }
    // A custom caller ID with no number to present cannot be dialled.
    if (t.caller_id_mode === 'custom' && t.custom_caller_id === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['custom_caller_id'],
        message: 'The custom caller id field is required when caller_id_mode is custom.',
      });
    }
  });

export const endCallSchema = z.strictObject({
  type: z.literal('end_call'),
  description: opt(text(1000)),
});

export const dtmfInputSchema = z.strictObject({
  type: z.literal('dtmf_input'),
  description: opt(text(1000)),
});

export const collectKeypadSchema = z.strictObject({
  type: z.literal('collect_keypad'),
  timeout: z.int().min(1).max(30).default(5),
  stop_key: z.enum(['#', '*']).default('#'),
  // Not in the spec's list, but the model needs to know when to ask for digits.
  description: opt(text(1000)),
});

export const assistantTransferSchema = z.strictObject({
  type: z.literal('assistant_transfer'),
  assistant_id: z.int().positive(),
  description: text(500).default(DEFAULT_TEXTS.assistant_transfer_description),
  message_before_transfer: opt(text(500)),
  speak_transfer_greeting: z.boolean().default(true),
});

const bookingField = z.strictObject({
  slug: text(100),
  type: text(50), // text, email, phone, select, ... (the calendar service's own list)
  label: text(255),
  required: z.boolean().default(false),
  options: opt(z.array(text(255)).max(100)),
});

/** The spec does not name the calendar tool's type; Switchboard calls it `calendar_booking`. */
export const calendarBookingSchema = z
  .strictObject({
    type: z.literal('calendar_booking'),
    calendar_api_key: text(500),
    calendar_event_slug: text(255),
    calendar_team_slug: opt(text(255)),
    calendar_endpoint: z.enum(['us', 'eu', 'custom']).default('us'),
    calendar_custom_endpoint: opt(z.url({ protocol: /^https?$/ }).max(2000)),
    calendar_booking_fields: z.array(bookingField).max(50).default([]),
    description: opt(text(1000)),
  })
  .superRefine((t, ctx) => {
    if (t.calendar_endpoint === 'custom' && t.calendar_custom_endpoint === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['calendar_custom_endpoint'],
        message: 'The calendar custom endpoint field is required when calendar_endpoint is custom.',
      });
    }
    t.calendar_booking_fields.forEach((f, i) => {
      if (f.type === 'select' && (f.options === null || f.options.length === 0)) {
        ctx.addIssue({ code: 'custom', path: ['calendar_booking_fields', i, 'options'], message: 'The options field is required for a select field.' });
      }
    });
  });

export const TOOL_TYPES = [
  'call_transfer',
  'warm_call_transfer',
  'end_call',
  'dtmf_input',
  'collect_keypad',
  'assistant_transfer',
  'calendar_booking',
] as const;

const union = z.discriminatedUnion(
  'type',
  [callTransferSchema, warmCallTransferSchema, endCallSchema, dtmfInputSchema, collectKeypadSchema, assistantTransferSchema, calendarBookingSchema],
  { error: () => `The tool type must be one of: ${TOOL_TYPES.join(', ')}.` },
);

/**
 * A tool as sent: flat (`{type, ...fields}`), or as read back (`{type, data}`), so a client can
 * PUT what it got from GET.
 */
export const builtinToolSchema = z.preprocess((v) => {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 2 && 'type' in o && o.data && typeof o.data === 'object' && !Array.isArray(o.data)) {
      return { ...(o.data as object), type: o.type };
    }
  }
  return v;
}, union);

export type BuiltinToolInput = z.output<typeof union>;
export type BuiltinToolType = (typeof TOOL_TYPES)[number];

/** Stored and returned form: `data` holds the same field names that were sent at top level. */
export type StoredTool = {
  [K in BuiltinToolType]: { type: K; data: Omit<Extract<BuiltinToolInput, { type: K }>, 'type'> };
}[BuiltinToolType];

export function toStored(tool: BuiltinToolInput): StoredTool {
  const { type, ...data } = tool;
  return { type, data } as StoredTool;
}

export function fromStored(tool: StoredTool): Record<string, unknown> {
  return { ...tool.data, type: tool.type };
}
