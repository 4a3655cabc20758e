import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { PhoneNumber } from '../../store/repos/phone-numbers.ts';
import { iso } from '../../store/json.ts';
import { isE164 } from '../../util/phone.ts';
import { ConflictError, NotFoundError } from '../../util/errors.ts';
import { stopRunningCampaigns } from '../stop-campaigns.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

/**
 * Phone numbers. Trunk numbers are created and removed with their SIP trunk; POST/DELETE here
 * manage caller-ID numbers only (our extension: the spec names the type but no operations).
 */

const createBody = z.object({
  phone_number: z.string().refine(isE164, 'The phone number field must be an E.164 number (+ and 8 to 15 digits).'),
  type: z.literal('caller_id').default('caller_id'),
});

const phoneNumberView = z.object({
  id: z.int(),
  phone_number: z.string(),
  type: z.enum(['sip_trunk', 'caller_id']),
  sip_trunk_id: z.int().nullable(),
  assistant_id: z.int().nullable().meta({ description: 'The inbound assistant answering this number' }),
  created_at: timestamp,
});

export function presentPhoneNumber(p: PhoneNumber) {
  return {
    id: p.id,
    phone_number: p.phoneNumber,
    type: p.type,
    sip_trunk_id: p.sipTrunkId,
    assistant_id: p.assistantId,
    created_at: iso(p.createdAt),
  };
}

export function registerPhoneNumberRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Phone Numbers'];
  api.route({
    method: 'GET',
    url: '/user/phone-numbers',
    summary: 'List phone numbers (trunk numbers and caller-ID numbers)',
    tags,
    response: z.array(phoneNumberView),
    async handler({ accountId }) {
      return (await ctx.repos.phoneNumbers.list(accountId)).map(presentPhoneNumber);
    },
  });
  api.route({
    method: 'POST',
    url: '/user/phone-numbers',
    summary: 'Register a caller-ID number',
    tags,
    body: createBody,
    status: 201,
    response: withData(phoneNumberView),
    errors: { 409: 'This caller-ID number is already registered' },
    async handler({ body, accountId }) {
      if (await ctx.repos.phoneNumbers.find(accountId, body.phone_number, 'caller_id')) {
        throw new ConflictError('This caller-ID number is already registered.');
      }
      const created = await ctx.repos.phoneNumbers.createCallerId(accountId, body.phone_number);
      return { message: 'Phone number created successfully', data: presentPhoneNumber(created) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/phone-numbers/:id',
    summary: 'Get a phone number',
    tags,
    params: idParams,
    response: phoneNumberView,
    async handler({ params, accountId }) {
      const number = await ctx.repos.phoneNumbers.get(accountId, params.id);
      if (!number) throw new NotFoundError('Phone number');
      return presentPhoneNumber(number);
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/phone-numbers/:id',
    summary: 'Delete a caller-ID number (assistants using it lose it, campaigns in progress from it stop)',
    tags,
    params: idParams,
    response: messageOnly,
    errors: { 409: 'The number belongs to a SIP trunk (delete the trunk instead)' },
    async handler({ params, accountId }) {
      const number = await ctx.repos.phoneNumbers.get(accountId, params.id);
      if (!number) throw new NotFoundError('Phone number');
      if (number.type === 'sip_trunk') {
        throw new ConflictError('This number belongs to a SIP trunk; delete the SIP trunk instead.');
      }
      const deleted = await ctx.repos.phoneNumbers.delete(accountId, number.id);
      if (!deleted) throw new NotFoundError('Phone number');
      await stopRunningCampaigns(ctx, deleted.stoppedCampaignIds, 'phone number deleted');
      return { message: 'Phone number deleted successfully' };
    },
  });
}
