import { addError } from '../api/validation.ts';
import type { OutboundPolicy } from '../net/outbound/index.ts';
import type { CreateInput } from './fields.ts';

/**
 * The assistant's URLs the engine will call (webhooks, a calendar's custom endpoint) may not
 * name an internal address: a literal loopback, private, link-local, ... IP or `localhost` is a
 * 422 here. Names are not resolved now; their addresses are checked when the engine connects.
 */
export function urlTargetRules(input: CreateInput, policy: OutboundPolicy, errors: Record<string, string[]>): void {
  const check = (field: string, url: string | null | undefined) => {
    const problem = url ? policy.urlProblem(field.split('.').at(-1)!.replace(/_/g, ' '), url) : undefined;
    if (problem) addError(errors, field, problem);
  };
  check('webhook_url', input.webhook_url);
  check('conversation_ended_webhook_url', input.conversation_ended_webhook_url);
  (input.tools ?? []).forEach((t, i) => {
    if (t.type === 'calendar_booking' && t.calendar_endpoint === 'custom') check(`tools.${i}.calendar_custom_endpoint`, t.calendar_custom_endpoint);
  });
}
