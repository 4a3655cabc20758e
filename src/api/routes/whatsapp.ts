import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { chatServices } from '../../chat/services.ts';
import { sessionStatusView, timestamp } from '../response-schemas.ts';

/** A `+` in a query string decodes to a space when the client did not encode it. */
function queryPhone(raw: string): string {
  const t = raw.replace(/^ (?=\d)/, '+');
  return t.trim();
}

export function registerWhatsappRoutes(api: Api, ctx: AppContext): void {
  const wa = () => chatServices(ctx).whatsapp;

  api.route({
    method: 'GET',
    url: '/user/whatsapp/session-status',
    summary: '24-hour session status of a sender and recipient',
    tags: ['WhatsApp'],
    errorStyle: 'success',
    query: z.object({
      sender_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      recipient_phone: z.string().min(1).max(32),
    }),
    response: z.object({
      success: z.literal(true),
      has_conversation: z.boolean(),
      session_status: sessionStatusView,
      conversation_id: z.int().optional().meta({ description: 'With has_conversation' }),
      customer_name: z.string().optional(),
      last_customer_message_at: timestamp.optional(),
    }),
    errors: {
      404: 'SENDER_NOT_FOUND',
      422: 'INVALID_PHONE: the recipient phone is not an E.164 number',
    },
    handler: ({ query, accountId }) => wa().sessionStatusFor(accountId, query.sender_id, queryPhone(query.recipient_phone)),
  });

  api.route({
    method: 'POST',
    url: '/user/whatsapp/send-freeform',
    summary: 'Send a freeform WhatsApp message inside an open session',
    tags: ['WhatsApp'],
    errorStyle: 'success',
    body: z.object({
      sender_id: z.number().int().positive(),
      recipient_phone: z.string().trim().min(1).max(32),
      message: z.string().min(1).max(4096),
    }),
    response: z.object({
      success: z.literal(true),
      conversation_id: z.int(),
      message_id: z.int(),
      whatsapp_message_id: z.int(),
      message_sid: z.string().meta({ description: 'The messaging provider’s message id' }),
      session_status: sessionStatusView,
    }),
    errors: {
      402: 'INSUFFICIENT_BALANCE',
      403: 'SESSION_EXPIRED: no open 24-hour session (session_status says why); send a template message',
      404: 'SENDER_NOT_FOUND',
      422: 'INVALID_PHONE: the recipient phone is not an E.164 number',
      429: 'Rate limit exceeded: per key, or more than 5 freeform messages per second for the account',
      502: 'PROVIDER_FAILED: the messaging provider refused or failed (retryable)',
      503: 'SENDER_OFFLINE',
    },
    handler: ({ body, accountId }) => wa().sendFreeform(accountId, body),
  });
}
