/**
 * The fetch for URLs a customer gave (webhooks, custom tools, a self-hosted calendar): the
 * engine's node:http fetch (src/providers/http-fetch.ts) over the guarded agents. What that path
 * does not carry (a stream body, a Request object, a scheme other than http/https) is refused
 * rather than handed to the global fetch, which would connect unguarded. Redirects are not
 * followed: a 3xx comes back as it is, so a public URL cannot bounce the request (and the
 * credentials it carries) to an internal one.
 *
 * A refused connection rejects with the OutboundRefusedError itself (not undici's opaque
 * `fetch failed`), so callers can say why and treat it as permanent.
 */
import { nodeFetch } from '../../providers/http-fetch.ts';
import type { GuardedAgents } from './agents.ts';
import { outboundRefusal } from './errors.ts';

const unsupported: typeof fetch = async (input) => {
  const scheme = typeof input === 'string' && URL.canParse(input) ? new URL(input).protocol : undefined;
  throw new TypeError('fetch failed', {
    cause: new Error(scheme && scheme !== 'http:' && scheme !== 'https:' ? `unsupported URL scheme ${scheme}` : 'unsupported request for a customer URL'),
  });
};

export function guardedFetch(agents: GuardedAgents): typeof fetch {
  const inner = nodeFetch((protocol) => (protocol === 'https:' ? agents.https : agents.http), unsupported);
  return async (input, init) => {
    try {
      return await inner(input, init);
    } catch (err) {
      throw outboundRefusal(err) ?? err;
    }
  };
}
