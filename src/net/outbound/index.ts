/**
 * Outbound requests to URLs a customer gave: webhook deliveries, custom mid-call and chat tools,
 * the calendar tool's custom Cal.com endpoint. Such a URL may not reach the engine's host or its
 * networks (loopback, link-local and the cloud metadata service, private, unique-local, ...)
 * unless the operator's allow-list (SWITCHBOARD_OUTBOUND_ALLOW_CIDRS) opens the range.
 *
 * Provider base URLs the operator configures (OPENAI_BASE_URL, DEEPGRAM_BASE_URL,
 * TWILIO_BASE_URL) are operator trust and do not come through here.
 */
import { parseAllowList } from './cidr.ts';
import { guardedAgents } from './agents.ts';
import { guardedFetch } from './fetch.ts';
import { guardedLookup, type Resolve } from './lookup.ts';
import { OutboundPolicy } from './policy.ts';

export { OutboundPolicy } from './policy.ts';
export { OutboundRefusedError, outboundRefusal } from './errors.ts';
export type { Resolve, ResolvedAddress } from './lookup.ts';

export interface Outbound {
  policy: OutboundPolicy;
  /** fetch for customer URLs: guarded at connect time, no redirects followed. */
  fetch: typeof fetch;
  /** Closes kept-alive connections. */
  close(): void;
}

export interface OutboundOptions {
  /** Addresses and CIDR ranges opened despite being private, loopback, ... */
  allowCidrs?: readonly string[];
  /** The resolver (default: the system's, as dns.lookup); tests play DNS through it. */
  resolve?: Resolve;
}

export function createOutbound(opts: OutboundOptions = {}): Outbound {
  const { cidrs, invalid } = parseAllowList((opts.allowCidrs ?? []).join(','));
  if (invalid.length > 0) throw new Error(`not addresses or CIDR ranges: ${invalid.join(', ')}`);
  const policy = new OutboundPolicy(cidrs);
  const agents = guardedAgents(policy, guardedLookup(policy, opts.resolve));
  return { policy, fetch: guardedFetch(agents), close: () => agents.destroy() };
}

let strict: Outbound | undefined;

/** The guard with no allow-list: what a client uses when it was given no fetch of its own. */
export function defaultOutbound(): Outbound {
  strict ??= createOutbound();
  return strict;
}

const forConfig = new WeakMap<object, Outbound>();

/**
 * The engine's guard: `ctx.outbound` when the composition root (or a test) set one, else one
 * built once from `config.outbound.allowCidrs`.
 */
export function outboundOf(ctx: { config: { outbound: { allowCidrs: readonly string[] } }; outbound?: Outbound }): Outbound {
  if (ctx.outbound) return ctx.outbound;
  let o = forConfig.get(ctx.config);
  if (!o) {
    o = createOutbound({ allowCidrs: ctx.config.outbound.allowCidrs });
    forConfig.set(ctx.config, o);
  }
  return o;
}
