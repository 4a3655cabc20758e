import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import { addError, throwIfErrors } from '../validation.ts';
import type { AppContext } from '../../context.ts';
import type { NewWhatsappSender, WhatsappSender } from '../../store/repos/whatsapp-senders.ts';
import { owns } from '../../store/ownership.ts';
import { iso } from '../../store/json.ts';
import { isE164 } from '../../util/phone.ts';
import { ConflictError, NotFoundError } from '../../util/errors.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

/**
 * WhatsApp senders: a number at the messaging provider with the account's own provider
 * credentials. The auth token is sealed at rest, used to call the provider and to check its
 * webhook signatures, and never returned.
 */

const phone = z.string().refine(isE164, 'The phone field must be an E.164 number (+ and 8 to 15 digits).');
const fields = {
  name: z.string().trim().min(1).max(255),
  phone,
  assistant_id: z.number().int().positive().nullable(),
  account_sid: z.string().trim().min(1).max(64),
  auth_token: z.string().min(1).max(256),
  status: z.enum(['online', 'offline']),
};

const createBody = z.object({
  ...fields,
  assistant_id: fields.assistant_id.optional(),
  status: fields.status.default('online'),
});

const updateBody = z.object({
  name: fields.name.optional(),
  phone: fields.phone.optional(),
  assistant_id: fields.assistant_id.optional(),
  account_sid: fields.account_sid.optional(),
  auth_token: fields.auth_token.optional(),
  status: fields.status.optional(),
});

const senderView = z.object({
  id: z.int(),
  name: z.string(),
  phone: z.string(),
  assistant_id: z.int().nullable(),
  account_sid: z.string(),
  status: z.enum(['online', 'offline']),
  created_at: timestamp,
  updated_at: timestamp,
});
const duplicatePhone = { 409: 'Another WhatsApp sender of the account has this phone number' };

export function presentSender(s: WhatsappSender) {
  return {
    id: s.id,
    name: s.name,
    phone: s.phone,
    assistant_id: s.assistantId,
    account_sid: s.accountSid,
    status: s.status,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
}

export function registerWhatsappSenderRoutes(api: Api, ctx: AppContext): void {
  const tags = ['WhatsApp'];

  /** The assistant must be the account's; the phone must not be another sender's of the account. */
  async function check(accountId: number, input: Partial<NewWhatsappSender>, selfId?: number): Promise<void> {
    const errors: Record<string, string[]> = {};
    if (input.assistantId != null && !(await owns(ctx.store, 'assistants', accountId, input.assistantId))) {
      addError(errors, 'assistant_id', 'The selected assistant id is invalid.');
    }
    throwIfErrors(errors);
    if (input.phone !== undefined) {
      const other = await ctx.repos.whatsappSenders.findByPhone(accountId, input.phone);
      if (other && other.id !== selfId) throw new ConflictError('A WhatsApp sender with this phone number already exists.');
    }
  }

  api.route({
    method: 'POST',
    url: '/user/whatsapp/senders',
    summary: 'Create a WhatsApp sender',
    tags,
    body: createBody,
    status: 201,
    response: withData(senderView),
    errors: duplicatePhone,
    async handler({ body, accountId }) {
      const input: NewWhatsappSender = {
        name: body.name,
        phone: body.phone,
        assistantId: body.assistant_id ?? null,
        accountSid: body.account_sid,
        authToken: body.auth_token,
        status: body.status,
      };
      await check(accountId, input);
      const sender = await ctx.repos.whatsappSenders.create(accountId, input);
      return { message: 'WhatsApp sender created successfully', data: presentSender(sender) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/whatsapp/senders',
    summary: 'List WhatsApp senders',
    tags,
    response: z.array(senderView),
    async handler({ accountId }) {
      return (await ctx.repos.whatsappSenders.list(accountId)).map(presentSender);
    },
  });
  api.route({
    method: 'GET',
    url: '/user/whatsapp/senders/:id',
    summary: 'Get a WhatsApp sender',
    tags,
    params: idParams,
    response: senderView,
    async handler({ params, accountId }) {
      const sender = await ctx.repos.whatsappSenders.get(accountId, params.id);
      if (!sender) throw new NotFoundError('WhatsApp sender');
      return presentSender(sender);
    },
  });
  api.route({
    method: 'PUT',
    url: '/user/whatsapp/senders/:id',
    summary: 'Update a WhatsApp sender (fields not sent are kept; status online/offline)',
    tags,
    params: idParams,
    body: updateBody,
    response: withData(senderView),
    errors: duplicatePhone,
    async handler({ params, body, accountId }) {
      if (!(await ctx.repos.whatsappSenders.get(accountId, params.id))) throw new NotFoundError('WhatsApp sender');
      const patch: Partial<NewWhatsappSender> = {
        name: body.name,
        phone: body.phone,
        assistantId: body.assistant_id,
        accountSid: body.account_sid,
        authToken: body.auth_token,
        status: body.status,
      };
      await check(accountId, patch, params.id);
      const sender = await ctx.repos.whatsappSenders.update(accountId, params.id, patch);
      if (!sender) throw new NotFoundError('WhatsApp sender');
      return { message: 'WhatsApp sender updated successfully', data: presentSender(sender) };
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/whatsapp/senders/:id',
    summary: 'Delete a WhatsApp sender (its conversations stay as history)',
    tags,
    params: idParams,
    response: messageOnly,
    async handler({ params, accountId }) {
      if (!(await ctx.repos.whatsappSenders.delete(accountId, params.id))) throw new NotFoundError('WhatsApp sender');
      return { message: 'WhatsApp sender deleted successfully' };
    },
  });
}
