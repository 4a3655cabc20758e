import type { FastifyReply, FastifyRequest } from 'fastify';
import { setRateHeaders, type RateLimiter } from './rate-limit.ts';
import type { Clock } from '../util/clock.ts';

export interface AuthDeps {
  accountForKey(key: string): Promise<number | undefined>;
  limiter: RateLimiter;
  clock: Clock;
}

function unauthorized(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(401).send({ error: 'Unauthorized', message });
}

/** Reads the bearer key. `undefined`: no header at all; `null`: a header that is not a bearer key. */
function bearer(request: FastifyRequest): string | undefined | null {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * onRequest hook: authenticates the key, then applies the per-key rate limit and sets the
 * X-RateLimit-* headers on every authenticated answer. Keys in query strings are never accepted.
 */
export function authHook(deps: AuthDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    request.accountId = 0;
    const mode = request.routeOptions.config?.auth ?? 'none';
    if (mode === 'none') return;
    const key = bearer(request);
    if (key === undefined && mode === 'optional') return;
    if (key === undefined) return unauthorized(reply, 'Missing Authorization header.');
    if (key === null) return unauthorized(reply, 'The Authorization header must be "Bearer <API_KEY>".');
    const accountId = await deps.accountForKey(key);
    if (accountId === undefined) return unauthorized(reply, 'Invalid API key.');
    request.accountId = accountId;
    const decision = await deps.limiter.hit(`key:${key}`, deps.clock.now());
    setRateHeaders(reply, decision);
    if (!decision.allowed) {
      return reply.code(429).send({ message: 'Too many requests.', retry_after: decision.retryAfterSec });
    }
  };
}
