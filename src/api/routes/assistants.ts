import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { AppError, NotFoundError } from '../../util/errors.ts';
import { createSchema, DEFAULTED, NULLABLE, REQUIRED, updateSchema } from '../../assistants/fields.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';
import { listItem, recordView, validateCreate, validateUpdate, type AssistantDeps } from '../../assistants/service.ts';
import { outboundOf } from '../../net/outbound/index.ts';
import { stopRunningCampaigns } from '../stop-campaigns.ts';
import { documentedShape } from '../../assistants/field-docs.ts';
import { providerWarnings } from '../../assistants/provider-warnings.ts';
import { assistantStatus, assistantStatuses, type StatusDeps } from '../../assistants/status.ts';
import { recordingsOf } from '../../blobs/index.ts';

const tags = ['Assistants'];
const disableWebhookBody = z.object({ assistant_id: z.int().positive().max(Number.MAX_SAFE_INTEGER) });

const { tools: _tools, ...defaultedWithoutTools } = DEFAULTED;
const nullable = Object.fromEntries(Object.entries(NULLABLE).map(([k, t]) => [k, t.nullable()])) as {
  [K in keyof typeof NULLABLE]: z.ZodNullable<(typeof NULLABLE)[K]>;
};

/** GET /user/assistant/{id} (recordView): every configured field, built-in tools as stored `{type, data}`. */
const assistantRecord = z.object({
  id: z.int(),
  uuid: z.uuid().meta({ description: 'The assistant_id of the chatbot conversation endpoints' }),
  ...REQUIRED,
  ...defaultedWithoutTools,
  ...nullable,
  tools: z.array(
    z.object({ type: z.string(), data: z.record(z.string(), z.unknown()).meta({ description: 'The tool’s fields as sent; calendar_api_key masked' }) }),
  ),
  status: z.enum(['active', 'inactive']),
  inbound_webhook_enabled: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

const assistantListItem = z.object({
  id: z.int(),
  uuid: z.uuid(),
  name: z.string(),
  type: z.enum(['inbound', 'outbound']),
  mode: z.enum(['pipeline', 'multimodal', 'dualplex']),
  status: z.enum(['active', 'inactive']),
  folder_id: z.int().nullable(),
  phone_number_id: z.int().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** A provider the saved assistant relies on that this process has no key for (an addition to the spec's body). */
const providerWarning = z.object({
  field: z.string().meta({ description: 'The assistant field whose provider is not configured' }),
  provider: z.string(),
  env: z.string().meta({ description: 'The environment variable that would configure it' }),
  message: z.string(),
});
const warnings = z.array(providerWarning).meta({ description: 'Providers this assistant uses that are not configured; empty when none' });

/**
 * The assistant bodies are documented by these schemas but validated in the handlers, from the
 * raw body (validateCreate / validateUpdate), so shape errors, unknown fields and cross-field
 * rules come back in one answer. What the route itself parses never fails, and in strip mode
 * reads only the known fields: a body of 80,000 unknown keys is not walked here.
 */
function documented<S extends z.ZodObject>(schema: S, withDefaults: boolean) {
  return z.object(documentedShape(schema.shape, withDefaults)).catch((ctx) => ctx.input as z.output<typeof schema>);
}

/** Assistant CRUD and the inbound-webhook switch. Another account's assistant is a plain 404. */
export function registerAssistantRoutes(api: Api, ctx: AppContext): void {
  const deps: AssistantDeps = { catalog: ctx.catalog, store: ctx.store, secrets: ctx.secrets, outbound: outboundOf(ctx).policy };
  const statusDeps: StatusDeps = { store: ctx.store, catalog: ctx.catalog, providers: ctx.config };
  const repo = ctx.repos.assistants;
  const notFound = () => new NotFoundError('Assistant');

  api.route({
    method: 'POST',
    url: '/user/assistant',
    summary: 'Create an assistant',
    tags,
    body: documented(createSchema, true),
    status: 201,
    response: withData(z.object({ id: z.int(), name: z.string(), status: z.literal('inactive'), type: z.enum(['inbound', 'outbound']), mode: z.enum(['pipeline', 'multimodal', 'dualplex']) })).extend({ warnings }),
    handler: async ({ request, accountId }) => {
      const config = await validateCreate(deps, accountId, request.body ?? {});
      const a = await repo.create(accountId, config);
      // The creation answer says `inactive`, as the spec fixes; reads give the computed status.
      return {
        message: 'Assistant created successfully.',
        data: { id: a.id, name: a.name, status: a.status, type: a.type, mode: a.mode },
        warnings: providerWarnings(config, ctx.catalog, ctx.config),
      };
    },
  });

  api.route({
    method: 'GET',
    url: '/user/assistants',
    summary: 'List the account’s assistants',
    tags,
    response: z.object({ assistants: z.array(assistantListItem) }),
    handler: async ({ accountId }) => {
      const list = await repo.list(accountId);
      const statuses = await assistantStatuses(statusDeps, accountId, list);
      return { assistants: list.map((a) => listItem(a, statuses.get(a.id) ?? 'inactive')) };
    },
  });

  api.route({
    method: 'GET',
    url: '/user/assistant/:id',
    summary: 'Read an assistant: every configured field',
    tags,
    params: idParams,
    response: assistantRecord,
    handler: async ({ params, accountId }) => {
      const a = await repo.get(accountId, params.id);
      if (!a) throw notFound();
      return recordView(deps, a, await assistantStatus(statusDeps, a));
    },
  });

  api.route({
    method: 'PUT',
    url: '/user/assistant/:id',
    summary: 'Update an assistant: sent fields are merged onto the stored ones, the result is validated whole',
    tags,
    params: idParams,
    // Another account's id must answer 404 whatever the body holds: existence is checked first.
    body: documented(updateSchema, false),
    response: withData(assistantRecord).extend({ warnings }),
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
      return {
        message: 'Assistant updated successfully.',
        data: recordView(deps, updated, await assistantStatus(statusDeps, updated)),
        warnings: providerWarnings(config, ctx.catalog, ctx.config),
      };
    },
  });

  api.route({
    method: 'DELETE',
    url: '/user/assistant/:id',
    summary: 'Delete an assistant with its configuration and call history (irreversible)',
    tags,
    params: idParams,
    response: messageOnly,
    handler: async ({ params, accountId }) => {
      let deleted: { stoppedCampaignIds: number[]; callFiles: string[] } | undefined;
      try {
        deleted = await repo.delete(accountId, params.id);
      } catch (err) {
        ctx.logger.error({ err, assistantId: params.id }, 'assistant deletion failed');
        throw new AppError('Failed to delete the assistant.', 500, 'DELETE_FAILED');
      }
      if (!deleted) throw notFound();
      // The call history's recordings and tapes go too: local copies and archived objects (retried until done).
      recordingsOf(ctx).remove(deleted.callFiles);
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
    response: z.object({ message: z.string(), data: z.array(z.never()).max(0) }),
    errors: { 404: 'No assistant with this assistant_id in the account' },
    handler: async ({ body, accountId }) => {
      if (!(await repo.setInboundWebhook(accountId, body.assistant_id, false))) throw notFound();
      return { message: 'Inbound webhook disabled successfully.', data: [] };
    },
  });
}
