/**
 * A call cut by a crash is closed by its real length. `switchboard serve` runs a call with a
 * short heartbeat period and is SIGKILLed mid-call: its record is still open, last stamped alive
 * within a period of the kill. The next start on the same data dir closes it at that stamp (not
 * at its answer) and bills it by that length with the normal per-minute rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_PRICE_PER_MINUTE_MICROS } from '../../../src/billing/prices.ts';
import { callCostMicros } from '../../../src/call/post-call/billing.ts';
import { ORPHAN_END_CAUSE } from '../../../src/call/wiring/sweeper.ts';
import { openStore } from '../../../src/store/db.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { testTempDir } from '../../support/temp-dir.ts';
import { EngineProcess, Providers, provisionInbound, seedAccount } from '../../support/engine-process.ts';

interface Row {
  id: number;
  status: string;
  end_cause: string | null;
  answer_at: number | null;
  end_at: number | null;
  last_alive_at: number | null;
  cost_micros: number;
  details: string | null;
}

let providers: Providers;
beforeAll(async () => {
  providers = await Providers.start();
});
afterAll(async () => {
  await providers?.close();
});

function readCalls(dataDir: string): Row[] {
  const store = openStore(dataDir);
  try {
    return store.sqlite.prepare('SELECT id, status, end_cause, answer_at, end_at, last_alive_at, cost_micros, details FROM calls').all() as Row[];
  } finally {
    void store.close();
  }
}

const HEARTBEAT_MS = 1_000;

describe('a call cut by a crash', () => {
  it('is closed on restart at its last heartbeat and billed by that length, not at its answer', async () => {
    const dataDir = testTempDir('switchboard-crash-');
    const account = await seedAccount(dataDir);
    const env = { ...providers.env, SWITCHBOARD_CALL_HEARTBEAT_SECONDS: String(HEARTBEAT_MS / 1000) };
    const first = await EngineProcess.start(dataDir, env);
    const phone = await TestPhone.create();
    let second: EngineProcess | undefined;
    try {
      await provisionInbound(first, account.key);
      await phone.call(first.target);
      // A few heartbeat periods into the call.
      await new Promise((r) => setTimeout(r, 3_500));
      const killedAt = Date.now();
      const exit = await first.stop('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');

      const [cut] = readCalls(dataDir);
      expect(cut).toMatchObject({ status: 'in-progress', end_at: null });
      const answerAt = cut!.answer_at!;
      const realMs = killedAt - answerAt;
      expect(realMs).toBeGreaterThan(3_000);
      // The last stamp is within one period of the kill (slack for a loaded machine's timers).
      expect(cut!.last_alive_at).not.toBeNull();
      expect(killedAt - cut!.last_alive_at!).toBeLessThanOrEqual(HEARTBEAT_MS + 750);
      await phone.close();

      second = await EngineProcess.start(dataDir, env);
      let closed: Row | undefined;
      for (let i = 0; i < 300 && !closed; i++) {
        const [row] = readCalls(dataDir);
        if (row?.end_at !== null && row?.details?.includes('finished_at')) closed = row;
        else await new Promise((r) => setTimeout(r, 100));
      }
      expect(closed, second.output).toBeDefined();
      expect(closed).toMatchObject({ status: 'completed', end_cause: ORPHAN_END_CAUSE, answer_at: answerAt, end_at: cut!.last_alive_at });
      const lengthMs = closed!.end_at! - answerAt;
      expect(lengthMs).toBeGreaterThan(0);
      expect(realMs - lengthMs).toBeLessThanOrEqual(HEARTBEAT_MS + 750);
      // Billed by that length with the normal rule (per started minute), once, in the ledger too.
      expect(closed!.cost_micros).toBe(callCostMicros(answerAt, closed!.end_at));
      const store = openStore(dataDir);
      const ledger = store.sqlite.prepare("SELECT amount_micros AS amount FROM ledger WHERE reason = 'call'").all() as { amount: number }[];
      await store.close();
      expect(ledger).toEqual([{ amount: -Math.ceil(lengthMs / 60_000) * CALL_PRICE_PER_MINUTE_MICROS }]);
    } finally {
      await phone.close();
      await first.stop('SIGKILL');
      await second?.stop('SIGTERM');
    }
  }, 180_000);
});
