import { z } from 'zod';

/**
 * Pieces of success bodies several route groups share. Each route's own view (the object its
 * presenter builds) lives next to that presenter, so the two change together.
 */

/** Timestamps as the store writes them: ISO 8601 in UTC with milliseconds (`iso()` in store/json.ts). */
export const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 timestamp (UTC)' });

/** `{message}`: deletions and similar acknowledgements. */
export const messageOnly = z.object({ message: z.string() });

/** `{message, data}`: what creations and updates answer with. */
export function withData<T extends z.ZodType>(data: T) {
  return z.object({ message: z.string(), data });
}

/** A function call the assistant made while answering (chat endpoints). */
export const functionCall = z.object({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()),
});

/** Free key/value pairs a client attached (conversation, lead or call variables). */
export const variablesView = z.record(z.string(), z.unknown()).nullable();

/** The WhatsApp 24-hour session (chat/whatsapp-session.ts). */
export const sessionStatusView = z.object({
  is_open: z.boolean(),
  can_send_freeform: z.boolean(),
  requires_template: z.boolean(),
  message: z.string(),
  minutes_remaining: z.int().min(0).optional(),
  expires_at: z.iso.datetime().optional(),
  expired_at: z.iso.datetime().optional(),
});
