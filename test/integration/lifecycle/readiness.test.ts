/**
 * A draining node tells everyone in front of it, from the moment SIGTERM arrives: `/readyz`
 * answers 503 while `/healthz` stays 200 (alive, saying it drains); out-of-dialog OPTIONS, what a
 * SIP proxy probes nodes with, are answered 503 with Retry-After, like new INVITEs; the live call
 * goes on, and once it ends the process exits 0 without waiting out the drain period.
 */
import { describe, expect, it } from 'vitest';
import { header } from '../../../src/sip/message.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { EngineProcess, provisionInbound, seedAccount } from '../../support/engine-process.ts';
import { FAST_TIMERS, TestPhone } from '../../support/test-phone.ts';
import { testTempDir } from '../../support/temp-dir.ts';

describe('readiness while draining', () => {
  it('SIGTERM: /readyz 503, /healthz 200 draining, OPTIONS and new INVITEs 503 with Retry-After, the live call goes on', async () => {
    const dataDir = testTempDir('switchboard-readiness-');
    const account = await seedAccount(dataDir);
    const engine = await EngineProcess.start(dataDir, { SWITCHBOARD_DRAIN_SECONDS: '30' });
    const probe = await UserAgent.create({ host: '127.0.0.1', port: 0, transports: ['udp'], userName: 'probe', timers: FAST_TIMERS });
    const phone = await TestPhone.create();
    try {
      await provisionInbound(engine, account.key);
      const echo = `sip:echo@127.0.0.1:${engine.sipPort}`;
      const nodeUri = `sip:127.0.0.1:${engine.sipPort}`;

      expect((await probe.options(nodeUri)).status).toBe(200);
      const readyBefore = await fetch(`${engine.httpUrl}/readyz`);
      expect(readyBefore.status).toBe(200);
      expect(await readyBefore.json()).toEqual({ status: 'ready', ready: true, draining: false });
      expect(await (await fetch(`${engine.httpUrl}/healthz`)).json()).toEqual({ status: 'ok', ready: true, draining: false });

      const live = await phone.call(echo);
      engine.child.kill('SIGTERM');
      let ready = 200;
      for (let i = 0; i < 100 && ready === 200; i++) {
        ready = (await fetch(`${engine.httpUrl}/readyz`)).status;
        if (ready === 200) await new Promise((r) => setTimeout(r, 20));
      }
      expect(ready).toBe(503);
      const health = await fetch(`${engine.httpUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', ready: false, draining: true });

      const options = await probe.options(nodeUri);
      expect(options.status).toBe(503);
      expect(header(options, 'retry-after')).toBe('30');

      const refused = await phone.dial(echo);
      expect((await refused.outcome).status).toBe(503);

      // The live call is untouched: its BYE is answered and then the drain ends at once.
      expect(engine.child.exitCode).toBeNull();
      const byeAt = Date.now();
      expect(await live.hangup()).toBe(200);
      // (A second SIGTERM would mean "out now": wait for the first one's drain to end instead.)
      const exit = await engine.exited;
      expect(exit.code, engine.output).toBe(0);
      expect(exit.atMs - byeAt, engine.output).toBeLessThan(10_000);
    } finally {
      await phone.close();
      await probe.close();
      await engine.stop('SIGKILL', 5000);
    }
  }, 60_000);
});
