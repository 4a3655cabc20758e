/**
 * SIGTERM on an idle `switchboard serve` (no live call) ends the process within 2 s, measured
 * from the signal to the child's exit as its parent sees it, also while the engine still holds
 * what an idle engine holds in the field: an open keep-alive HTTP connection from a client, an
 * open SIP TCP connection, and a webhook delivery in flight to a receiver that never answers.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { createRepos } from '../../../src/store/index.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { testTempDir } from '../../support/temp-dir.ts';
import { EngineProcess, Providers, seedAccount } from '../../support/engine-process.ts';

let providers: Providers;
let silent: http.Server;
let held = 0;
beforeAll(async () => {
  providers = await Providers.start();
  // A webhook receiver that takes the request and never answers.
  silent = http.createServer(() => void held++);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  silent?.closeAllConnections();
  await new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
  await providers?.close();
});

describe('SIGTERM on an idle engine', () => {
  it('exits within 2 s while a client keeps an HTTP connection open, a SIP TCP connection is open and a webhook delivery hangs', async () => {
    const dataDir = testTempDir('switchboard-drain-idle-held-');
    const account = await seedAccount(dataDir);
    const store = openStore(dataDir);
    try {
      const port = (silent.address() as net.AddressInfo).port;
      await createRepos(store, systemClock).outbox.enqueue(account.id, 'call.completed', `http://127.0.0.1:${port}/hook`, '{"type":"call.completed"}');
    } finally {
      await store.close();
    }
    const engine = await EngineProcess.start(dataDir, { ...providers.env, SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    const agent = new http.Agent({ keepAlive: true });
    const sipTcp = new net.Socket();
    try {
      // The delivery worker picks the pending event up at start and waits on the silent receiver.
      for (let i = 0; i < 100 && held === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(held).toBe(1);
      // serve names its data directory on stderr (the store was already there: no warning).
      expect(engine.output).toContain(`switchboard: data directory ${dataDir}`);
      expect(engine.output).not.toContain('warning: no store');
      // A keep-alive connection, left open after its answer.
      const status = await new Promise<number>((resolve, reject) => {
        http.get(`${engine.httpUrl}/healthz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
      expect(status).toBe(200);
      await new Promise<void>((resolve, reject) => sipTcp.connect(engine.sipPort, '127.0.0.1', resolve).once('error', reject));

      const sentAt = Date.now();
      const exit = await engine.stop('SIGTERM');
      expect(exit.code, engine.output).toBe(0);
      expect(exit.atMs - sentAt, engine.output).toBeLessThan(2_000);
    } finally {
      sipTcp.destroy();
      agent.destroy();
      await engine.stop('SIGKILL');
    }
  }, 120_000);
});
