/**
 * The outbound guard as the tests need it. Stand-ins (webhook sinks, tool servers, Cal.com) live
 * on loopback, which the guard refuses by default; tests that talk to them open loopback
 * explicitly through the operator's allow-list, never by weakening the default.
 */
import { createOutbound, type Outbound, type Resolve, type ResolvedAddress } from '../../src/net/outbound/index.ts';
import { HttpSink } from './http-sink.ts';

/** The allow-list value for SWITCHBOARD_OUTBOUND_ALLOW_CIDRS that opens loopback (IPv4 and IPv6). */
export const LOOPBACK_ALLOW_CIDRS = '127.0.0.0/8,::1/128';

let loopback: Outbound | undefined;

/** The guard with loopback opened, for stand-ins on 127.0.0.1. */
export function loopbackOutbound(): Outbound {
  loopback ??= createOutbound({ allowCidrs: LOOPBACK_ALLOW_CIDRS.split(',') });
  return loopback;
}

/**
 * A scripted DNS: each name answers from its list of answers in turn (the last one repeats), so a
 * test can make a name change its address between two lookups. Unknown names: ENOTFOUND.
 */
export class ScriptedDns {
  /** Every lookup asked, in order. */
  readonly asked: string[] = [];
  private readonly next = new Map<string, number>();

  constructor(private readonly answers: Record<string, Array<string | string[]>>) {}

  readonly resolve: Resolve = async (hostname) => {
    this.asked.push(hostname);
    const script = this.answers[hostname.toLowerCase()];
    if (!script || script.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const i = this.next.get(hostname) ?? 0;
    this.next.set(hostname, i + 1);
    const answer = script[Math.min(i, script.length - 1)]!;
    return (Array.isArray(answer) ? answer : [answer]).map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/**
 * Two sinks on one port: `internal` on 127.0.0.1 (the address an attacker wants to reach) and
 * `outside` on 127.0.0.2, which tests open through the allow-list to stand for a public server.
 */
export async function internalAndOutside(): Promise<{ internal: HttpSink; outside: HttpSink; port: number; close(): Promise<void> }> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const outside = await HttpSink.start({ host: '127.0.0.2' });
    try {
      const internal = await HttpSink.start({ host: '127.0.0.1', port: outside.port });
      return { internal, outside, port: outside.port, close: async () => void (await Promise.all([internal.close(), outside.close()])) };
    } catch {
      // That port is taken on 127.0.0.1: another one.
      await outside.close();
    }
  }
  throw new Error('no port free on both 127.0.0.1 and 127.0.0.2');
}
