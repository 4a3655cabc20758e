/**
 * http(s) agents whose every connection goes through the outbound policy: a host that is an
 * address literal is checked before connecting (net does not call `lookup` for literals), a name
 * is resolved by the guarded lookup. Redirects never come here on their own: the guarded fetch
 * does not follow them.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { OutboundRefusedError } from './errors.ts';
import type { OutboundPolicy } from './policy.ts';

type Callback = (err: Error | null, stream: Duplex) => void;

function literalRefusal(policy: OutboundPolicy, host: unknown): OutboundRefusedError | undefined {
  const h = typeof host === 'string' ? host.replace(/^\[|\]$/g, '') : '';
  if (net.isIP(h) === 0) return undefined;
  const kind = policy.refusal(h);
  return kind ? new OutboundRefusedError(h, h, kind) : undefined;
}

export interface GuardedAgents {
  http: http.Agent;
  https: https.Agent;
  /** Closes the kept-alive sockets. */
  destroy(): void;
}

/** Idle kept-alive sockets are closed after this long (the server usually closes first). */
const IDLE_MS = 5_000;

export function guardedAgents(policy: OutboundPolicy, lookup: net.LookupFunction): GuardedAgents {
  class GuardedHttpAgent extends http.Agent {
    override createConnection(options: http.ClientRequestArgs, callback?: Callback): Duplex | null | undefined {
      const refused = literalRefusal(policy, options.host ?? options.hostname);
      if (refused) {
        callback?.(refused, undefined as unknown as Duplex);
        return undefined;
      }
      return super.createConnection({ ...options, lookup } as http.ClientRequestArgs, callback);
    }
  }
  class GuardedHttpsAgent extends https.Agent {
    override createConnection(options: https.RequestOptions, callback?: Callback): Duplex | null | undefined {
      const refused = literalRefusal(policy, options.host ?? options.hostname);
      if (refused) {
        callback?.(refused, undefined as unknown as Duplex);
        return undefined;
      }
      return super.createConnection({ ...options, lookup } as https.RequestOptions, callback);
    }
  }
  const agents = {
    http: new GuardedHttpAgent({ keepAlive: true, timeout: IDLE_MS }),
    https: new GuardedHttpsAgent({ keepAlive: true, timeout: IDLE_MS }),
    destroy() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
  return agents;
}
