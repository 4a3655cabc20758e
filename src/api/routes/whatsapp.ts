import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { chatServices } from '../../chat/services.ts';

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
    handler: ({ body, accountId }) => wa().sendFreeform(accountId, body),
  });
}
