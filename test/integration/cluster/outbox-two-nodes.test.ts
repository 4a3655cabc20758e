/**
 * The webhook outbox delivered by two nodes: two DeliveryWorkers, each with its own connection
 * to one database (one SQLite file in WAL mode; one PostgreSQL database through two pools, where
 * the test server is installed), post to a receiver on loopback. One node dies holding claims (its
 * requests hang forever: half never left, half reached the receiver before the node died). The
 * other delivers its own share at once and the dead node's rows once their leases lapse, as the
 * next attempt: every event is marked delivered once, no (event, attempt) is ever sent twice,
 * and the webhook-id is what lets the receiver drop the one repeat a crash can cause.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createRepos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { DeliveryWorker } from '../../../src/webhooks/delivery.ts';
import { verify } from '../../../src/webhooks/signing.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { AVAILABLE_BACKENDS } from '../../support/postgres.ts';
import { openTwoNodeStore, type TwoNodeStore } from '../../support/two-node-store.ts';

const SECRET = 'whsec_' + Buffer.alloc(24, 9).toString('base64');
const LEASE_MS = 2000;
const quiet = pino({ level: 'silent' });

let nodes: TwoNodeStore | undefined;
let sink: HttpSink | undefined;
const workers: DeliveryWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) void w.stop();
  await sink?.close();
  await nodes?.close();
  nodes = undefined;
});

describe.each(AVAILABLE_BACKENDS)('webhook outbox over two nodes on one %s database', (backend) => {
  it('every event delivered once, including those a dead node held, each attempt sent at most once', async () => {
    nodes = await openTwoNodeStore(backend, 'outbox-nodes');
    const stores = [nodes.a, nodes.b];
    const box = new SecretBox(Buffer.alloc(32, 3));
    const [repoA, repoB] = stores.map((s) => createRepos(s, systemClock, box));
    const account = await repoA!.accounts.create('acme');
    sink = await HttpSink.start();
    const N = 30;
    for (let i = 0; i < N; i++) await repoA!.outbox.enqueue(account.id, 'call.completed', `${sink.url}/hook`, JSON.stringify({ event: i }));

    // node-a dies in its first pass: every request it makes hangs forever; the odd ones reach
    // the receiver first (the node died after sending, before recording the delivery).
    let sentByA = 0;
    const neverSettles = new Promise<Response>(() => {});
    const deadFetch: typeof fetch = async (url, init) => {
      if (sentByA++ % 2 === 1) await fetch(url, init);
      return neverSettles;
    };
    const a = new DeliveryWorker({ outbox: repoA!.outbox, secretFor: async () => SECRET, clock: systemClock, logger: quiet, fetch: deadFetch, pollMs: 50, holder: 'node-a', leaseTtlMs: LEASE_MS });
    workers.push(a);
    const aStartedAt = Date.now();
    a.start();
    for (let i = 0; i < 100 && sentByA < 20; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sentByA).toBe(20); // one batch claimed, then frozen
    const claimedByA = (await repoB!.outbox.list(account.id)).filter((r) => r.leaseHolder === 'node-a');
    expect(claimedByA).toHaveLength(20);

    const b = new DeliveryWorker({ outbox: repoB!.outbox, secretFor: async () => SECRET, clock: systemClock, logger: quiet, fetch, pollMs: 50, baseBackoffMs: 100, holder: 'node-b', leaseTtlMs: LEASE_MS });
    workers.push(b);
    b.start();
    const delivered = async () => (await repoB!.outbox.list(account.id)).filter((r) => r.status === 'delivered');
    for (let i = 0; i < 150 && (await delivered()).length < N; i++) await new Promise((r) => setTimeout(r, 50));
    const rows = await repoB!.outbox.list(account.id);
    expect(rows.every((r) => r.status === 'delivered' && r.leaseHolder === null)).toBe(true);
    // node-a's rows went out again only after their leases lapsed, as attempt 2.
    const aIds = new Set(claimedByA.map((r) => r.id));
    // (A slow answer on a loaded machine may cost one of node-b's own rows a retry too: the
    // request is cut at half the lease. What matters is below: no attempt is ever sent twice.)
    expect(rows.filter((r) => aIds.has(r.id)).every((r) => r.attempts >= 2)).toBe(true);
    expect(Math.min(...rows.filter((r) => aIds.has(r.id)).map((r) => r.deliveredAt!))).toBeGreaterThanOrEqual(aStartedAt + LEASE_MS);

    // At the receiver: no (webhook-id, attempt) twice; each signature verifies; deduplicated by
    // webhook-id, every event is processed exactly once.
    const pairs = sink.received.map((d) => `${d.headers['webhook-id']}#${d.headers['webhook-attempt']}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    const nowSec = Math.floor(Date.now() / 1000);
    expect(sink.received.every((d) => verify(SECRET, d.headers as Record<string, string>, d.body, nowSec))).toBe(true);
    const processed = new Map<string, string>();
    for (const d of sink.received) if (!processed.has(String(d.headers['webhook-id']))) processed.set(String(d.headers['webhook-id']), d.body);
    expect(processed.size).toBe(N);
    expect(new Set(processed.values()).size).toBe(N);
    // Nothing beyond the attempts counted: the events, the ten node-a sent before it died, and
    // retries after an attempt that failed (a request cut on a loaded machine may not even arrive).
    const failedAttempts = rows.reduce((n, r) => n + r.attempts, 0) - N - 20;
    expect(sink.received.length).toBeLessThanOrEqual(N + 10 + failedAttempts);
  });
});
