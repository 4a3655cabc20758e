import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import { addError, throwIfErrors } from '../validation.ts';
import type { AppContext } from '../../context.ts';
import type { Campaign, LeadCounts } from '../../store/repos/campaigns.ts';
import type { Lead } from '../../store/repos/leads.ts';
import { iso } from '../../store/json.ts';
import { isE164 } from '../../util/phone.ts';
import { HHMM, isTimeZone } from '../../campaigns/calling-hours.ts';
import { isCampaignAction, noopCampaignRunner, transition } from '../../campaigns/state.ts';
import { CAMPAIGN_START_MIN_BALANCE_MICROS } from '../../billing/prices.ts';
import { AppError, ConflictError, NotFoundError } from '../../util/errors.ts';
import { messageOnly, timestamp, variablesView, withData } from '../response-schemas.ts';

export const MAX_LEADS_PER_REQUEST = 10_000;

const time = (field: string) => z.string().refine((s) => HHMM.test(s), `The ${field} field must be a time of day as HH:MM (24-hour).`);
const callingHours = z
  .object({
    start: time('start'),
    end: time('end'),
    days: z.array(z.number().int().min(1).max(7)).min(1).max(7).optional(),
    timezone: z.string().refine(isTimeZone, 'The timezone field must be an IANA time zone such as Europe/Berlin.').optional(),
  })
  .refine((h) => h.start !== h.end, { message: 'The end field must differ from start.', path: ['end'] });

const createBody = z.object({
  name: z.string().trim().min(1).max(255),
  assistant_id: z.number().int().positive(),
  phone_number_id: z.number().int().positive(),
  max_concurrent_calls: z.number().int().min(1).max(50).default(1),
  calling_hours: callingHours.nullish(),
});

const leadsBody = z.object({
  leads: z
    .array(
      z.object({
        phone_number: z.string().refine(isE164, 'The phone number field must be an E.164 number (+ and 8 to 15 digits).'),
        variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).nullish(),
      }),
    )
    .min(1)
    .max(MAX_LEADS_PER_REQUEST),
});

const leadsQuery = z.object({
  status: z.enum(['pending', 'calling', 'done', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

const statusBody = z.object({ campaign_id: z.number().int().positive(), action: z.string() });

const campaignStatus = z.enum(['draft', 'in-progress', 'stopped', 'completed']);
const leadStatus = z.enum(['pending', 'calling', 'done', 'failed']);

const campaignView = z.object({
  id: z.int(),
  name: z.string(),
  assistant_id: z.int(),
  phone_number_id: z.int(),
  max_concurrent_calls: z.int(),
  calling_hours: z
    .object({ start: z.string(), end: z.string(), days: z.array(z.int()).optional(), timezone: z.string().optional() })
    .nullable(),
  status: campaignStatus,
  lead_counts: z.object({ total: z.int(), pending: z.int(), calling: z.int(), done: z.int(), failed: z.int() }),
  created_at: timestamp,
  updated_at: timestamp,
});

const leadView = z.object({
  id: z.int(),
  phone_number: z.string(),
  variables: variablesView,
  status: leadStatus,
  attempts: z.int(),
  last_outcome: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

function presentCampaign(c: Campaign, counts: LeadCounts | undefined) {
  return {
    id: c.id,
    name: c.name,
    assistant_id: c.assistantId,
    phone_number_id: c.phoneNumberId,
    max_concurrent_calls: c.maxConcurrentCalls,
    calling_hours: c.callingHours,
    status: c.status,
    lead_counts: counts ?? { total: 0, pending: 0, calling: 0, done: 0, failed: 0 },
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

function presentLead(l: Lead) {
  return {
    id: l.id,
    phone_number: l.phoneNumber,
    variables: l.variables,
    status: l.status,
    attempts: l.attempts,
    last_outcome: l.lastOutcome,
    created_at: iso(l.createdAt),
    updated_at: iso(l.updatedAt),
  };
}

export function registerCampaignRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Campaigns'];
  const withCounts = async (accountId: number, c: Campaign) =>
    presentCampaign(c, (await ctx.repos.campaigns.leadCounts(accountId, [c.id])).get(c.id));
  const own = async (accountId: number, id: number) => {
    const c = await ctx.repos.campaigns.get(accountId, id);
    if (!c) throw new NotFoundError('Campaign');
    return c;
  };

  api.route({
    method: 'POST',
    url: '/user/campaigns',
    summary: 'Create an outbound calling campaign (status draft)',
    tags,
    body: createBody,
    status: 201,
    response: withData(campaignView),
    async handler({ body, accountId }) {
      const errors: Record<string, string[]> = {};
      const assistant = await ctx.store.db
        .selectFrom('assistants')
        .select(['id', 'type'])
        .where('account_id', '=', accountId)
        .where('id', '=', body.assistant_id)
        .executeTakeFirst();
      if (!assistant) addError(errors, 'assistant_id', 'The selected assistant id is invalid.');
      else if (assistant.type !== 'outbound') addError(errors, 'assistant_id', 'The assistant of a campaign must be an outbound assistant.');
      if (!(await ctx.repos.phoneNumbers.get(accountId, body.phone_number_id))) {
        addError(errors, 'phone_number_id', 'The selected phone number id is invalid.');
      }
      throwIfErrors(errors);
      const campaign = await ctx.repos.campaigns.create(accountId, {
        name: body.name,
        assistantId: body.assistant_id,
        phoneNumberId: body.phone_number_id,
        maxConcurrentCalls: body.max_concurrent_calls,
        callingHours: body.calling_hours ?? null,
      });
      return { message: 'Campaign created successfully', data: presentCampaign(campaign, undefined) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/campaigns',
    summary: 'List campaigns, newest first',
    tags,
    response: z.array(campaignView),
    async handler({ accountId }) {
      const list = await ctx.repos.campaigns.list(accountId);
      const counts = await ctx.repos.campaigns.leadCounts(accountId, list.map((c) => c.id));
      return list.map((c) => presentCampaign(c, counts.get(c.id)));
    },
  });
  api.route({
    method: 'GET',
    url: '/user/campaigns/:id',
    summary: 'Get a campaign with lead counts',
    tags,
    params: idParams,
    response: campaignView,
    async handler({ params, accountId }) {
      return withCounts(accountId, await own(accountId, params.id));
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/campaigns/:id',
    summary: 'Delete a campaign and its leads (stop it first if it is in progress)',
    tags,
    params: idParams,
    response: messageOnly,
    errors: { 409: 'The campaign is in progress' },
    async handler({ params, accountId }) {
      const result = await ctx.repos.campaigns.delete(accountId, params.id);
      if (result === 'missing') throw new NotFoundError('Campaign');
      if (result === 'running') throw new ConflictError('The campaign is in progress; stop it before deleting it.');
      return { message: 'Campaign deleted successfully' };
    },
  });
  api.route({
    method: 'POST',
    url: '/user/campaigns/:id/leads',
    summary: `Add up to ${MAX_LEADS_PER_REQUEST} leads (numbers already in the campaign are skipped)`,
    tags,
    params: idParams,
    body: leadsBody,
    status: 201,
    response: withData(z.object({ campaign_id: z.int(), added: z.int(), duplicates: z.int() })),
    errors: { 409: 'The campaign is completed' },
    async handler({ params, body, accountId }) {
      const campaign = await own(accountId, params.id);
      if (campaign.status === 'completed') throw new ConflictError('The campaign is completed; create a new campaign for new leads.');
      const result = await ctx.repos.leads.add(
        accountId,
        campaign.id,
        body.leads.map((l) => ({ phoneNumber: l.phone_number, variables: l.variables ?? null })),
      );
      return { message: 'Leads added successfully', data: { campaign_id: campaign.id, added: result.added, duplicates: result.duplicates } };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/campaigns/:id/leads',
    summary: 'List the leads of a campaign',
    tags,
    params: idParams,
    query: leadsQuery,
    response: z.array(leadView),
    async handler({ params, query, accountId }) {
      const campaign = await own(accountId, params.id);
      return (await ctx.repos.leads.list(accountId, campaign.id, query)).map(presentLead);
    },
  });

  api.route({
    method: 'POST',
    url: '/user/campaigns/update-status',
    summary: 'Start or stop a campaign',
    tags,
    errorStyle: 'campaign',
    body: statusBody,
    response: z.object({
      message: z.string(),
      success: z.literal(true),
      data: z.object({ campaign_id: z.int(), status: campaignStatus }),
    }),
    errors: {
      402: 'Insufficient balance to start the campaign (data: campaign_id and its unchanged status)',
      403: 'The campaign belongs to another account',
      404: 'No campaign with this campaign_id',
      409: 'The campaign’s status does not allow the action, or changed meanwhile',
      422: 'The action is not start or stop; or, starting, the campaign has no leads left or its assistant or phone number no longer exists',
      500: 'The dialer failed to start the campaign (its status is put back)',
    },
    async handler({ body, accountId }) {
      const action = body.action;
      if (!isCampaignAction(action)) throw new AppError('Invalid action. The action must be start or stop.', 422, 'INVALID_ACTION');
      const campaign = await ctx.repos.campaigns.getById(body.campaign_id);
      if (!campaign) throw new AppError('Campaign not found.', 404, 'CAMPAIGN_NOT_FOUND');
      // The spec lists "access denied (campaign of another user)" apart from "not found": this is
      // the one route where another account's resource is a 403, not a 404.
      if (campaign.accountId !== accountId) throw new AppError('Access denied: the campaign belongs to another user.', 403, 'ACCESS_DENIED');
      const data = { campaign_id: campaign.id, status: campaign.status };
      const fail = (message: string, status: number, code: string) => new AppError(message, status, code, false, { data });
      const step = transition(campaign.status, action);
      if (!step.ok) throw fail(step.message, 409, step.reason.toUpperCase());
      if (action === 'start') {
        if (!await ctx.repos.ledger.covers(accountId, CAMPAIGN_START_MIN_BALANCE_MICROS)) {
          throw fail('Insufficient balance to start the campaign. Please top up your account.', 402, 'INSUFFICIENT_BALANCE');
        }
        if ((await ctx.repos.leads.pendingCount(campaign.id)) === 0) {
          throw fail('The campaign has no leads left to call. Add leads before starting it.', 422, 'NO_LEADS');
        }
        const assistant = await ctx.store.db
          .selectFrom('assistants')
          .select('id')
          .where('account_id', '=', accountId)
          .where('id', '=', campaign.assistantId)
          .executeTakeFirst();
        if (!assistant) throw fail('The assistant of this campaign no longer exists.', 422, 'ASSISTANT_NOT_FOUND');
        if (!(await ctx.repos.phoneNumbers.get(accountId, campaign.phoneNumberId))) {
          throw fail('The phone number of this campaign no longer exists.', 422, 'PHONE_NUMBER_NOT_FOUND');
        }
      }
      if (!(await ctx.repos.campaigns.setStatus(campaign.id, campaign.status, step.next))) {
        throw fail('The campaign status changed meanwhile; please retry.', 409, 'CONFLICT');
      }
      const runner = ctx.campaignRunner ?? noopCampaignRunner;
      if (action === 'start') {
        try {
          await runner.start(campaign.id);
        } catch (err) {
          // The dialer refused: put the state back so the campaign does not claim to run.
          await ctx.repos.campaigns.setStatus(campaign.id, step.next, campaign.status);
          ctx.logger.error({ campaignId: campaign.id, err: (err as Error).message }, 'campaign runner failed to start');
          throw fail('Failed to start the campaign.', 500, 'CAMPAIGN_START_FAILED');
        }
      } else {
        // Stopped is already recorded; a runner that fails to abort calls is logged, not undone.
        await runner.stop(campaign.id).catch((err: unknown) => ctx.logger.error({ campaignId: campaign.id, err: (err as Error).message }, 'campaign runner failed to stop'));
      }
      return {
        message: action === 'start' ? 'Campaign started' : 'Campaign stopped',
        success: true,
        data: { campaign_id: campaign.id, status: step.next },
      };
    },
  });
}
