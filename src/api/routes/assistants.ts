import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { AppError, NotFoundError } from '../../util/errors.ts';
import { createSchema, updateSchema } from '../../assistants/fields.ts';
import { listItem, recordView, validateCreate, validateUpdate, type AssistantDeps } from '../../assistants/service.ts';
import { outboundOf } from '../../net/outbound/index.ts';
import { stopRunningCampaigns } from '../stop-campaigns.ts';

const tags = ['Assistants'];
const disableWebhookBody = z.object({ assistant_id: z.int().positive().max(Number.MAX_SAFE_INTEGER) });

/**
 * The assistant bodies are documented by these schemas but validated in the handlers, from the
 * raw body (validateCreate / validateUpdate), so shape errors, unknown fields and cross-field
 * rules come back in one answer. What the route itself parses never fails, and in strip mode
 * reads only the known fields: a body of 80,000 unknown keys is not walked here.
 */
function documented<S extends z.ZodObject>(schema: S) {
  return z.object(schema.shape).catch((ctx) => ctx.input as z.output<typeof schema>);
}

/** Assistant CRUD and the inbound-webhook switch. Another account's assistant is a plain 404. */
export function registerAssistantRoutes(api: Api, ctx: AppContext): void {
  const deps: AssistantDeps = { catalog: ctx.catalog, store: ctx.store, secrets: ctx.secrets, outbound: outboundOf(ctx).policy };
  const repo = ctx.repos.assistants;
  const notFound = () => new NotFoundError('Assistant');

  api.route({
    method: 'POST',
    url: '/user/assistant',
    summary: 'Create an assistant',
    tags,
    body: documented(createSchema),
    status: 201,
    handler: async ({ request, accountId }) => {
      const config = await validateCreate(deps, accountId, request.body ?? {});
      const a = await repo.create(accountId, config);
      return { message: 'Assistant created successfully.', data: { id: a.id, name: a.name, status: a.status, type: a.type, mode: a.mode } };
    },
  });

  api.route({
    method: 'GET',
    url: '/user/assistants',
    summary: 'List the account’s assistants',
    tags,
    handler: async ({ accountId }) => ({ assistants: (await repo.list(accountId)).map(listItem) }),
  });

  api.route({
    method: 'GET',
    url: '/user/assistant/:id',
    summary: 'Read an assistant: every configured field',
    tags,
    params: idParams,
    handler: async ({ params, accountId }) => {
      const a = await repo.get(accountId, params.id);
      if (!a) throw notFound();
      return recordView(deps, a);
    },
  });

  api.route({
    method: 'PUT',
    url: '/user/assistant/:id',
    summary: 'Update an assistant: sent fields are merged onto the stored ones, the result is validated whole',
    tags,
    params: idParams,
    // Another account's id must answer 404 whatever the body holds: existence is checked first.
    body: documented(updateSchema),
    handler: async ({ params, request, accountId }) => {
      const body = request.body ?? {};
      const stored = await repo.get(accountId, params.id);
      if (!stored) throw notFound();
      const config = await validateUpdate(deps, accountId, stored, body);
      const updated = await repo.update(accountId, params.id, config);
      if (!updated) throw notFound();
      // Turning the webhook on again is how an inbound webhook switched off by
      // disable-inbound-webhook comes back.
      if ((body as { is_webhook_active?: boolean }).is_webhook_active === true && !updated.inboundWebhookEnabled) {
        await repo.setInboundWebhook(accountId, params.id, true);
        updated.inboundWebhookEnabled = true;
      }
      return { message: 'Assistant updated successfully.', data: recordView(deps, updated) };
    },
  });

  api.route({
    method: 'DELETE',
    url: '/user/assistant/:id',
    summary: 'Delete an assistant with its configuration and call history (irreversible)',
    tags,
    params: idParams,
    handler: async ({ params, accountId }) => {
      let deleted: { stoppedCampaignIds: number[] } | undefined;
      try {
        deleted = await repo.delete(accountId, params.id);
      } catch (err) {
        ctx.logger.error({ err, assistantId: params.id }, 'assistant deletion failed');
        throw new AppError('Failed to delete the assistant.', 500, 'DELETE_FAILED');
      }
      if (!deleted) throw notFound();
      await stopRunningCampaigns(ctx, deleted.stoppedCampaignIds, 'assistant deleted');
      return { message: 'Assistant deleted successfully.' };
    },
  });

  api.route({
    method: 'POST',
    url: '/user/assistants/disable-inbound-webhook',
    summary: 'Turn off the inbound webhook of an assistant',
    tags,
    body: disableWebhookBody,
    handler: async ({ body, accountId }) => {
      if (!(await repo.setInboundWebhook(accountId, body.assistant_id, false))) throw notFound();
      return { message: 'Inbound webhook disabled successfully.', data: [] };
    },
  });
}
