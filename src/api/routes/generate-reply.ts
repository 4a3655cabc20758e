import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { chatServices } from '../../chat/services.ts';
import { generateReply } from '../../chat/generate-reply.ts';
import { functionCall } from '../response-schemas.ts';

export function registerGenerateReplyRoutes(api: Api, ctx: AppContext): void {
  api.route({
    method: 'POST',
    url: '/user/ai/generate-reply',
    summary: 'Generate an AI reply for a customer message',
    tags: ['AI'],
    errorStyle: 'success',
    body: z.object({
      assistant_id: z.number().int().positive(),
      customer_identifier: z.string().trim().min(1).max(255),
      // The spec sets no limit; this one only keeps a single request from flooding the model.
      message: z.string().trim().min(1).max(10_000),
      variables: z.record(z.string(), z.unknown()).nullable().optional(),
    }),
    response: z.object({
      success: z.literal(true),
      conversation_id: z.uuid(),
      customer_identifier: z.string(),
      reply: z.string().meta({ description: 'Empty while a human has taken over (ai_disabled)' }),
      function_calls: z.array(functionCall),
      ai_disabled: z.boolean(),
    }),
    errors: {
      402: 'INSUFFICIENT_BALANCE',
      404: 'ASSISTANT_NOT_FOUND: no assistant with this assistant_id in the account',
      409: 'CONVERSATION_ENDED: the customer’s conversation has ended and its assistant does not allow a restart',
      502: 'PROVIDER_FAILED: the language model failed (retryable)',
      503: 'PROVIDER_NOT_CONFIGURED: the assistant’s language model has no key in this engine (the message names the variable)',
    },
    handler: ({ body, accountId }) => generateReply(ctx, chatServices(ctx).conversations, accountId, body),
  });
}
