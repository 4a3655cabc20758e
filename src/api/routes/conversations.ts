import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { chatServices } from '../../chat/services.ts';
import { API_WINDOWS, setRateHeaders } from '../rate-limit.ts';
import { limiterFor } from '../../cluster/limiter-for.ts';
import { AppError } from '../../util/errors.ts';
import { functionCall, timestamp, variablesView } from '../response-schemas.ts';
import { iso } from '../../store/json.ts';

const uuidParams = z.object({ uuid: z.string().min(1).max(64) });
const variables = z.record(z.string(), z.unknown()).nullable().optional();

const historyItem = z.object({
  role: z.enum(['assistant', 'user']),
  content: z.string(),
  function_calls: z.array(functionCall).optional(),
});
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  assistant_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});

/** A row of GET /user/conversations: what a list shows; the history is read one by one. */
const conversationListItem = z.object({
  conversation_id: z.uuid(),
  assistant_id: z.int(),
  type: z.enum(['widget', 'test', 'api', 'whatsapp']),
  status: z.enum(['active', 'ended']),
  ai_enabled: z.boolean(),
  customer_identifier: z.string().nullable(),
  external_identifier: z.string().nullable(),
  customer: z
    .object({ name: z.string().nullable(), phone: z.string().nullable() })
    .nullable()
    .meta({ description: 'The customer of a WhatsApp conversation; null for other types' }),
  message_count: z.int().min(0),
  last_message_at: timestamp,
  created_at: timestamp,
  ended_at: timestamp.nullable(),
});

const nameAndPhone = z.object({ name: z.string().nullable(), phone: z.string().nullable() });

const chatbotErrors = {
  404: 'No such assistant or conversation (with a key: none of the key’s account)',
  429: 'Rate limit exceeded: per key, or per client address without a key',
} as const;

/**
 * Chatbot conversations and AI hand-over. The three chatbot endpoints take an optional key: with
 * one, only the key's account's assistants and conversations exist; without, the assistant UUID
 * (then the conversation UUID) is the capability, as embeddable widgets need.
 */
export function registerConversationRoutes(api: Api, ctx: AppContext): void {
  const chat = () => chatServices(ctx).conversations;
  // Keyed requests are limited per key by the auth hook; keyless widget traffic gets the same
  // limits per client address, or one visitor could spend an account's balance unchecked.
  // Counted before the body is read or validated: refusing only valid requests would leave a
  // flood of invalid ones free.
  const anonymous = limiterFor(ctx.cluster, 'api-ip', API_WINDOWS);
  const limit = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.accountId !== 0) return;
    const d = await anonymous.hit(`ip:${request.ip}`, ctx.clock.now());
    setRateHeaders(reply, d);
    if (!d.allowed) {
      throw new AppError('Too many requests.', 429, 'RATE_LIMITED', true, { message: 'Too many requests.', retry_after: d.retryAfterSec });
    }
  };

  api.route({
    method: 'POST',
    url: '/conversations',
    summary: 'Start a chatbot conversation',
    tags: ['Conversations'],
    auth: 'optional',
    errorStyle: 'status',
    body: z.object({
      assistant_id: z.uuid(),
      type: z.enum(['widget', 'test']).default('widget'),
      variables,
    }),
    response: z.object({ status: z.literal(true), conversation_id: z.uuid(), history: z.array(historyItem) }),
    errors: { ...chatbotErrors, 400: 'The body is not valid JSON, or the account’s balance is too low for a widget conversation' },
    onRequest: limit,
    handler: ({ body, accountId }) => chat().create(accountId, body.assistant_id, body.type, body.variables),
  });

  api.route({
    method: 'GET',
    url: '/conversations/:uuid',
    summary: 'Read a conversation with its history',
    tags: ['Conversations'],
    auth: 'optional',
    errorStyle: 'status',
    params: uuidParams,
    response: z.object({
      status: z.literal(true),
      history: z.array(historyItem),
      variables: variablesView,
      external_identifier: z.string().optional(),
      whatsapp_sender: z.object({ name: z.string(), phone: z.string() }).optional(),
      customer: nameAndPhone.optional(),
    }),
    errors: chatbotErrors,
    onRequest: limit,
    handler: ({ params, accountId }) => chat().view(accountId, params.uuid),
  });

  api.route({
    method: 'POST',
    url: '/conversations/:uuid/messages',
    summary: 'Send a user message and get the assistant reply',
    tags: ['Conversations'],
    auth: 'optional',
    errorStyle: 'status',
    params: uuidParams,
    body: z.object({ message: z.string().trim().min(1).max(2000) }),
    response: z.object({
      status: z.literal(true),
      message: z.string().meta({ description: 'The reply; empty while a human has taken over' }),
      function_calls: z.array(functionCall),
    }),
    errors: {
      ...chatbotErrors,
      400: 'The body is not valid JSON; the balance is too low; the message could not be processed; or the conversation has ended',
    },
    onRequest: limit,
    handler: ({ params, body, accountId }) => chat().sendMessage(accountId, params.uuid, body.message),
  });

  api.route({
    method: 'GET',
    url: '/user/conversations',
    summary: 'List the account’s chat conversations, most recently active first (read one with GET /conversations/{uuid})',
    tags: ['Conversations'],
    query: listQuery,
    response: z.array(conversationListItem),
    async handler({ query, accountId }) {
      const rows = await ctx.repos.conversations.listForAccount(accountId, {
        limit: query.limit,
        offset: query.offset,
        ...(query.assistant_id !== undefined && { assistantId: query.assistant_id }),
      });
      return rows.map((c) => ({
        conversation_id: c.uuid,
        assistant_id: c.assistantId,
        type: c.type,
        status: c.status,
        ai_enabled: c.aiEnabled,
        customer_identifier: c.customerIdentifier,
        external_identifier: c.externalIdentifier,
        customer: c.whatsappSenderId !== null ? { name: c.customerName, phone: c.customerPhone } : null,
        message_count: c.messageCount,
        last_message_at: iso(c.lastMessageAt)!,
        created_at: iso(c.createdAt)!,
        ended_at: iso(c.endedAt),
      }));
    },
  });

  for (const [action, enabled] of [['disable-ai', false], ['enable-ai', true]] as const) {
    api.route({
      method: 'POST',
      url: `/automate/conversations/:uuid/${action}`,
      summary: enabled ? 'Resume AI replies in a conversation' : 'Stop AI replies (human takeover)',
      tags: ['Conversations'],
      errorStyle: 'status',
      params: uuidParams,
      response: z.object({ status: z.literal(true), ai_enabled: z.literal(enabled) }),
      handler: ({ params, accountId }) => chat().setAiEnabled(accountId, params.uuid, enabled),
    });
  }
}
