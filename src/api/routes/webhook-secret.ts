import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { iso } from '../../store/json.ts';
import { NotFoundError } from '../../util/errors.ts';
import { isOverlapping, type SecretState } from '../../webhooks/secret-rotation.ts';

/**
 * The account's webhook signing secret (docs/WEBHOOKS.md, "Signing"). Only the calling account's
 * own secret is ever read: there is no id in the URL. The answers carry the secret, so they are
 * marked not to be cached; nothing here logs it.
 */

const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;

const secretView = z.object({
  webhook_secret: z.string().meta({ description: 'The current signing secret, `whsec_` + base64.' }),
  previous_secret_valid_until: z
    .string()
    .nullable()
    .meta({ description: 'While a rotation overlaps: until when (ISO 8601) the replaced secret still signs beside the current one; else null.' }),
});

const rotateBody = z.object({
  overlap_seconds: z
    .int()
    .min(0)
    .max(MAX_OVERLAP_SECONDS)
    .optional()
    .meta({ description: 'How long the replaced secret keeps signing (default SWITCHBOARD_WEBHOOK_SECRET_OVERLAP_HOURS, 24 h); 0 retires it at once.' }),
  force: z
    .boolean()
    .optional()
    .meta({ description: 'Rotate even while an earlier rotation still overlaps; the older replaced secret then stops signing. For a leaked secret: force with overlap_seconds 0.' }),
});

export function secretViewOf(state: SecretState, nowMs: number): z.output<typeof secretView> {
  return {
    webhook_secret: state.current,
    previous_secret_valid_until: isOverlapping(state, nowMs) ? iso(state.previousUntilMs!) : null,
  };
}

export function registerWebhookSecretRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Webhooks'];
  api.route({
    method: 'GET',
    url: '/user/webhook-secret',
    summary: "Read the account's webhook signing secret",
    tags,
    response: secretView,
    async handler({ accountId, reply }) {
      const state = await ctx.repos.accounts.secretState(accountId);
      if (!state) throw new NotFoundError('Account');
      reply.header('cache-control', 'no-store');
      return secretViewOf(state, ctx.clock.now());
    },
  });
  api.route({
    method: 'POST',
    url: '/user/webhook-secret/rotate',
    summary: 'Rotate the webhook signing secret (the replaced one keeps signing during the overlap)',
    tags,
    body: rotateBody,
    response: z.object({ message: z.string(), data: secretView }),
    errors: { 409: 'ROTATION_IN_PROGRESS: an earlier rotation still overlaps (its replaced secret still signs); send force: true to retire that secret and rotate' },
    async handler({ body, accountId, reply }) {
      const overlapMs = body.overlap_seconds === undefined ? ctx.config.webhookSecretOverlapMs : body.overlap_seconds * 1000;
      const state = await ctx.repos.accounts.rotateWebhookSecret(accountId, overlapMs, body.force === true);
      if (!state) throw new NotFoundError('Account');
      ctx.logger.info({ accountId, overlapMs, forced: body.force === true }, 'webhook signing secret rotated');
      reply.header('cache-control', 'no-store');
      return { message: 'Webhook secret rotated successfully', data: secretViewOf(state, ctx.clock.now()) };
    },
  });
}
