/**
 * Overload shedding (src/sip/server.ts): past `overload.maxLiveCalls` live calls, new INVITEs get
 * 503 with Retry-After before any store work, and calls are taken again once one ends; the same
 * when the event loop's sustained delay passes `overload.maxLoopDelayMs`, driven here through an
 * injected monitor (the real one, src/sip/loop-lag.ts, is unit-tested on its own). Elsewhere the
 * tests turn the delay check off (maxLoopDelayMs: 0) so a slow CI loop cannot shed calls by itself.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { header, type SipResponse } from '../../../src/sip/message.ts';
import type { LoopDelayMonitor } from '../../../src/sip/loop-lag.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
afterEach(async () => {
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

async function phone(host = '127.0.0.1'): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  phones.push(p);
  return p;
}

describe('overload shedding', () => {
  it('past maxLiveCalls, sheds new INVITEs with 503 + Retry-After before any store work, and recovers', async () => {
    h = await harness({ overload: { maxLiveCalls: 2, maxLoopDelayMs: 0, retryAfterS: 7 } });
    await h.trunk();
    const p = await phone();
    const first = await p.call(h.target('echo'));
    const second = await p.call(h.target('echo'));
    expect(h.server.registry.size).toBe(2);
    expect(h.server.shed).toEqual({ liveCalls: 0, loopDelay: 0 });

    const third = await p.dial(h.target('echo'));
    const refused = await third.invite!.result.then(
      () => undefined,
      (e: { response?: SipResponse }) => e.response,
    );
    expect(refused?.status).toBe(503);
    expect(header(refused!, 'retry-after')).toBe('7');
    expect((await third.outcome).status).toBe(503);
    expect(h.server.shed).toEqual({ liveCalls: 1, loopDelay: 0 });
    // Shed before the store: no call record for the refused INVITE.
    expect((await h.req('GET', '/user/calls')).body).toHaveLength(2);
    // The live calls were not disturbed.
    expect(h.server.registry.size).toBe(2);

    await first.hangup();
    await until(() => h!.server.registry.size === 1, 3000, 'first call gone');
    const fourth = await p.call(h.target('echo'));
    expect(h.server.registry.size).toBe(2);
    expect(h.server.shed.liveCalls).toBe(1);

    await second.hangup();
    await fourth.hangup();
    await until(() => h!.server.registry.size === 0, 3000, 'all calls gone');
    const causes = ((await h.req('GET', '/user/calls')).body as Array<{ end_cause: string }>).map((c) => c.end_cause);
    expect(causes).toEqual(['remote-hangup', 'remote-hangup', 'remote-hangup']);
  });

  it('sheds new INVITEs with 503 while the sustained event-loop delay is over the limit, and takes calls again after', async () => {
    const monitor: LoopDelayMonitor & { p99Ms: number; closed: boolean } = {
      p99Ms: 0,
      closed: false,
      close() {
        this.closed = true;
      },
    };
    h = await harness({ overload: { maxLiveCalls: 100, maxLoopDelayMs: 40, retryAfterS: 3, loopMonitor: monitor } });
    await h.trunk();
    const p = await phone();
    const live = await p.call(h.target('echo'));

    monitor.p99Ms = 41;
    const refusedCall = await p.dial(h.target('echo'));
    const refused = await refusedCall.invite!.result.then(
      () => undefined,
      (e: { response?: SipResponse }) => e.response,
    );
    expect(refused?.status).toBe(503);
    expect(header(refused!, 'retry-after')).toBe('3');
    expect(h.server.shed).toEqual({ liveCalls: 0, loopDelay: 1 });
    expect((await h.req('GET', '/user/calls')).body).toHaveLength(1);

    // At the limit is not over it.
    monitor.p99Ms = 40;
    const accepted = await p.call(h.target('echo'));
    expect(h.server.registry.size).toBe(2);
    expect(h.server.shed.loopDelay).toBe(1);

    await live.hangup();
    await accepted.hangup();
    await until(() => h!.server.registry.size === 0, 3000, 'all calls gone');
    await h.close();
    h = undefined;
    expect(monitor.closed).toBe(true);
  });
});

