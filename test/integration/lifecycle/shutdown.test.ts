/**
 * SIGTERM on `switchboard serve` with a live call: the whole drain is bounded. Calls get
 * SWITCHBOARD_DRAIN_SECONDS to finish, are then hung up, their BYEs get a short bounded wait
 * (a peer that never answers BYE must not hold the process for the BYE transaction's 32 s), and
 * the process exits with every call record closed. With no call live, it exits at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { testTempDir } from '../../support/temp-dir.ts';
import { EngineProcess, Providers, provisionInbound, seedAccount } from '../../support/engine-process.ts';

let providers: Providers;
beforeAll(async () => {
  providers = await Providers.start({ silentLlm: true });
});
afterAll(async () => {
  await providers?.close();
});

/** A phone whose SIP stack drops every BYE it is sent: the engine's BYE is never answered. */
async function deafToBye(): Promise<TestPhone> {
  const phone = await TestPhone.create();
  const layer = phone.ua.layer;
  const receive = layer.receiveRequest.bind(layer);
  layer.receiveRequest = (req, source) => {
    if (req.method !== 'BYE') receive(req, source);
  };
  return phone;
}

describe('SIGTERM drain', () => {
  it('exits within a few seconds of the drain period when the peer never answers the BYE, with the call record closed', async () => {
    const dataDir = testTempDir('switchboard-drain-');
    const account = await seedAccount(dataDir);
    const engine = await EngineProcess.start(dataDir, { ...providers.env, SWITCHBOARD_DRAIN_SECONDS: '1' });
    const phone = await deafToBye();
    try {
      // Its post-call evaluation asks an LLM that never answers: that wait is cut by the drain too.
      await provisionInbound(engine, account.key, {
        post_call_schema: [{ name: 'booked', type: 'bool', description: 'Whether a table was booked' }],
      });
      const call = await phone.call(engine.target);
      await new Promise((r) => setTimeout(r, 1000));
      const sentAt = Date.now();
      const exit = await engine.stop('SIGTERM');
      const tookMs = exit.atMs - sentAt;
      expect(exit.code, engine.output).toBe(0);
      // Grace (1 s) + the BYE and post-call wait (2 s) + closing, not the BYE's 32 s or the evaluation's 60 s.
      expect(tookMs, engine.output).toBeLessThan(5_000);
      const store = openStore(dataDir);
      const rows = store.sqlite.prepare('SELECT status, end_cause, answer_at, end_at, last_alive_at FROM calls').all() as Record<string, number | string>[];
      await store.close();
      expect(rows).toEqual([expect.objectContaining({ status: 'completed', end_cause: 'shutdown' })]);
      // The call had its grace: hung up a drain period after SIGTERM, not at once.
      expect(Number(rows[0]!.end_at) - sentAt).toBeGreaterThanOrEqual(900);
      // The engine sent its BYE (and got no answer: the phone's dialog is still up).
      expect(call.dialog?.isEnded).toBe(false);
    } finally {
      await phone.close();
      await engine.stop('SIGKILL');
    }
  }, 120_000);

  it('exits within 2 s of SIGTERM when no call is live', async () => {
    const dataDir = testTempDir('switchboard-drain-idle-');
    const engine = await EngineProcess.start(dataDir, providers.env);
    try {
      const sentAt = Date.now();
      const exit = await engine.stop('SIGTERM');
      expect(exit.code, engine.output).toBe(0);
      expect(exit.atMs - sentAt).toBeLessThan(2_000);
    } finally {
      await engine.stop('SIGKILL');
    }
  }, 60_000);
});
