import { z } from 'zod';
import { pathId, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { FastifyRequest } from 'fastify';
import { chatServices } from '../../chat/services.ts';
import { validTwilioSignature } from '../../chat/twilio.ts';
import type { WhatsappSender } from '../../store/repos/whatsapp-senders.ts';
import { AppError } from '../../util/errors.ts';

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const senderParams = z.object({ sender_id: pathId });
const form = z.record(z.string(), z.string());

/**
 * Twilio's webhooks for a WhatsApp sender: no bearer key, but every request must carry a valid
 * X-Twilio-Signature made with the sender's auth token over our public URL. Anything else is
 * 403 before a single row is written (an unknown sender looks the same, revealing nothing).
 */
export function registerInboundWebhookRoutes(api: Api, ctx: AppContext): void {
  async function authenticate(request: FastifyRequest, senderId: number, params: Record<string, string>): Promise<WhatsappSender> {
    const sender = await ctx.repos.whatsappSenders.getById(senderId);
    const url = `${ctx.config.publicUrl}${request.url}`;
    const signature = request.headers['x-twilio-signature'];
    if (!sender || !validTwilioSignature(sender.authToken, url, params, typeof signature === 'string' ? signature : undefined)) {
      throw new AppError('Invalid or missing Twilio signature.', 403, 'INVALID_SIGNATURE');
    }
    return sender;
  }

  api.route({
    method: 'POST',
    url: '/webhooks/whatsapp/:sender_id',
    summary: 'Inbound WhatsApp messages (Twilio webhook)',
    tags: ['Webhooks'],
    auth: 'none',
    consumes: 'application/x-www-form-urlencoded',
    params: senderParams,
    body: form,
    produces: 'text/xml',
    errors: { 403: 'The X-Twilio-Signature is missing or invalid, or the sender does not exist' },
    handler: async ({ params, body, request, reply }) => {
      const sender = await authenticate(request, params.sender_id, body);
      await chatServices(ctx).whatsapp.inbound(sender, body);
      void reply.header('content-type', 'text/xml');
      return EMPTY_TWIML;
    },
  });

  api.route({
    method: 'POST',
    url: '/webhooks/whatsapp/:sender_id/status',
    summary: 'Delivery status callbacks of sent WhatsApp messages (Twilio)',
    tags: ['Webhooks'],
    auth: 'none',
    consumes: 'application/x-www-form-urlencoded',
    params: senderParams,
    body: form,
    produces: 'text/xml',
    errors: { 403: 'The X-Twilio-Signature is missing or invalid, or the sender does not exist' },
    handler: async ({ params, body, request, reply }) => {
      const sender = await authenticate(request, params.sender_id, body);
      await chatServices(ctx).whatsapp.statusUpdate(sender, body);
      void reply.header('content-type', 'text/xml');
      return EMPTY_TWIML;
    },
  });
}
