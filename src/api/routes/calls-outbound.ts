import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { addError, throwIfErrors } from '../validation.ts';
import { AppError } from '../../util/errors.ts';
import { isE164 } from '../../util/phone.ts';
import { callView, presentCall } from './calls.ts';

/**
 * POST /user/calls: place one outbound call. The record comes back at once (201, status
 * `queued`); the INVITE runs in the SIP layer and the status moves on (ringing, in-progress,
 * completed, busy, no-answer, declined, invalid-number, failed) — poll GET /user/calls/{id}.
 * Ids that are not the account's are 422 like the campaign routes, so other accounts' ids and
 * missing ones look alike.
 */
const body = z.object({
  assistant_id: z.number().int().positive(),
  phone_number_id: z.number().int().positive(),
  to: z.string().refine(isE164, 'The to field must be an E.164 number (+ and 8 to 15 digits).'),
  variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).nullish(),
});

export function registerOutboundCallRoutes(api: Api, ctx: AppContext): void {
  api.route({
    method: 'POST',
    url: '/user/calls',
    summary: 'Place one outbound call through the phone number’s SIP trunk',
    tags: ['Calls'],
    body,
    status: 201,
    response: callView,
    errors: { 503: 'The phone number’s SIP trunk is not registered or calling is not available right now' },
    async handler({ body, accountId }) {
      const errors: Record<string, string[]> = {};
      const assistant = await ctx.repos.assistants.get(accountId, body.assistant_id);
      if (!assistant) addError(errors, 'assistant_id', 'The selected assistant id is invalid.');
      const phone = await ctx.repos.phoneNumbers.get(accountId, body.phone_number_id);
      if (!phone) addError(errors, 'phone_number_id', 'The selected phone number id is invalid.');
      else if (phone.type !== 'sip_trunk' || phone.sipTrunkId === null) {
        addError(errors, 'phone_number_id', 'The phone number must belong to a SIP trunk to place calls.');
      }
      throwIfErrors(errors);
      const trunk = ctx.trunks.list().find((t) => t.spec.id === phone!.sipTrunkId);
      if (!trunk || !ctx.dialer) throw new AppError('Calling is not available right now', 503, 'SIP_UNAVAILABLE', true);
      const call = await ctx.dialer.place({
        accountId,
        assistant: assistant!,
        phoneNumberId: phone!.id,
        trunk,
        to: body.to,
        ...(body.variables ? { variables: body.variables } : {}),
      });
      return presentCall(call, ctx.config.publicUrl);
    },
  });
}
