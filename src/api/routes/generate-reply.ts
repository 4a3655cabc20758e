import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { chatServices } from '../../chat/services.ts';
import { generateReply } from '../../chat/generate-reply.ts';

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
    handler: ({ body, accountId }) => generateReply(ctx, chatServices(ctx).conversations, accountId, body),
  });
}
