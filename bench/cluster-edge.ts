/**
 * The cluster path against one node direct, in one run, as B/A ratios:
 *   A) the caller → one engine node (`switchboard serve`) on its SIP port;
 *   B) the caller → the shipped Kamailio edge (deploy/kamailio/kamailio.cfg) → two engine nodes.
 * All three engine-side parts are the same in both: the nodes share one PostgreSQL database and
 * one Redis, and phase A calls node A of the same pair directly (node B sits idle then), so the
 * difference is the edge hop and the second node, not the store.
 *
 *   node --import tsx bench/cluster-edge.ts [--serial 50] [--rate-calls 300] [--in-flight 10]
 *        [--held 50,100] [--hold-s 4] [--probes 20] [--rounds 2] [--warm-up 150] [--json FILE]
 *
 * Per phase, with echo calls (the built-in `echo` number; no AI providers):
 * - setup: `--serial` calls one at a time, INVITE sent → 200 received (the UA ACKs at once), p50/p95;
 * - rate: `--rate-calls` calls with `--in-flight` K at once (closed loop: INVITE → 200 → ACK →
 *   BYE → 200, the next one at once), calls/s sustained and setup p50/p95 under that load;
 * - held: N calls up (10 set up at a time), held `--hold-s` seconds with PCMU both ways while
 *   `--probes` further calls are set up one at a time (setup p95 while held); all answered? all
 *   still up and heard at the end?
 * First `--warm-up` calls to node A direct and twice as many through the edge (V8 optimises
 * each node's call path of its own). The phases alternate, A B then B A (`--rounds`), and each figure of the table is its median
 * over the rounds (the mean of two with the default), so the machine's drift hits both alike.
 * Loopback only: nodes on 127.0.0.1, Kamailio 127.0.0.2, the caller 127.0.0.3. Skips with the
 * reason when kamailio, PostgreSQL or redis-server is missing. Every loop is bounded in count and
 * the whole run by a watchdog.
 */
import crypto from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { openConfiguredStore } from '../src/store/open-store.ts';
import { createRepos } from '../src/store/index.ts';
import { systemClock } from '../src/util/clock.ts';
import { dollarsToMicros } from '../src/util/money.ts';
import { EngineProcess } from '../test/support/engine-process.ts';
import { createTestDatabase, dropTestDatabase, postgresAvailable, postgresUnavailableReason } from '../test/support/postgres.ts';
import { redisAvailable, startRedisServer, type RedisServer } from '../test/support/redis.ts';
import { KamailioEdge, kamailioAvailable } from '../test/interop/support/kamailio-edge.ts';
import { freePort, tempDir } from '../test/interop/support/tools.ts';
import { LoadGen, type Carrier, type PlacedCall } from './lib/loadgen.ts';
import { loadavg, machineInfo, procCpuMs, systemBusyPct, systemCpu } from './lib/machine.ts';
import { fmt, percentileOf } from './lib/stats.ts';
import { list, num, parseArgs, sleep, watchdog } from './lib/cli.ts';

const EDGE_IP = '127.0.0.2';
const CALLER_IP = '127.0.0.3';
const TRUNK_NUMBER = '+14155550123';

interface SetupStats {
  n: number;
  failed: number;
  p50: number;
  p95: number;
}

interface HeldResult {
  target: number;
  answered: number;
  /** Up at the end of the hold (not ended by the engine) and heard RTP from it. */
  stillUpWithMedia: number;
  rampSetup: SetupStats;
  probeSetup: SetupStats;
  byeFailed: number;
}

interface PhaseResult {
  name: string;
  serial: SetupStats;
  rate: SetupStats & { cps: number; wallS: number; engineCpuMsPerCall: number; nodeCpuMs: Record<string, number>; edgeCpuMsPerCall: number };
  held: HeldResult[];
  /** Calls each node answered (by the RTP port range in its SDP answer). */
  byNode: Record<string, number>;
  machineBusyPct: number;
}

const A_NAME = 'A: one node direct';
const B_NAME = 'B: Kamailio → two nodes';

const stats = (setup: number[], failed: number): SetupStats => ({ n: setup.length, failed, p50: percentileOf(setup, 50), p95: percentileOf(setup, 95) });

/** CPU of a process and every process whose parent it is (Kamailio forks its workers). */
function treeCpuMs(pid: number): number {
  let total = procCpuMs(pid) ?? 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) total += procCpuMs(Number(d)) ?? 0;
    } catch {
      // gone
    }
  }
  return total;
}

export async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const serialN = num(args, 'serial', 50, 1, 500);
  const rateCalls = num(args, 'rate-calls', 300, 10, 2000);
  const inFlight = num(args, 'in-flight', 10, 1, 100);
  const heldLevels = list(args, 'held', [50, 100], 150);
  const holdS = num(args, 'hold-s', 4, 1, 30);
  const probes = num(args, 'probes', 20, 1, 200);
  const rounds = num(args, 'rounds', 2, 1, 3);
  const warmUp = num(args, 'warm-up', 150, 0, 1000);
  const jsonOut = args.get('json');

  const missing = [!kamailioAvailable() && 'kamailio', !postgresAvailable && `PostgreSQL (${postgresUnavailableReason})`, !redisAvailable && 'redis-server'].filter(Boolean);
  if (missing.length) {
    console.log(`# cluster-edge benchmark SKIPPED: missing ${missing.join(', ')} (all listed in .ci/apt-packages)`);
    return;
  }
  watchdog(175_000, 'cluster-edge benchmark');
  const info = machineInfo();
  console.log(`# cluster-edge benchmark — ${info.date}`);
  console.log(`# ${info.cores} cores, ${info.cpuModel}, node ${info.node}; load average before: ${info.loadavg.join(' ')}`);
  console.log(`# per phase: ${serialN} serial calls; ${rateCalls} calls with ${inFlight} in flight; held ${heldLevels.join(', ')} for ${holdS} s with ${probes} probe calls`);

  const secretKey = crypto.randomBytes(32).toString('base64');
  let dbUrl: string | undefined;
  let redis: RedisServer | undefined;
  let edge: KamailioEdge | undefined;
  const nodes: Array<{ id: string; proc: EngineProcess; dir: { remove(): void }; rtp: [number, number] }> = [];
  const gen = new LoadGen();
  let carrier: Carrier | undefined;
  const cleanup = async () => {
    await gen.close(carrier ? [carrier] : []).catch(() => undefined);
    await edge?.stop().catch(() => undefined);
    for (const n of nodes) {
      await n.proc.stop('SIGKILL', 5000).catch(() => undefined);
      n.dir.remove();
    }
    await redis?.stop().catch(() => undefined);
    if (dbUrl) await dropTestDatabase(dbUrl).catch(() => undefined);
  };
  const onSignal = () => void cleanup().finally(() => process.exit(1));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const results: PhaseResult[] = [];
  try {
    dbUrl = await createTestDatabase();
    redis = await startRedisServer();
    const seedDir = tempDir('bench-cluster-seed');
    const { store, secrets } = await openConfiguredStore(loadConfig({ SWITCHBOARD_DATA_DIR: seedDir.path, SWITCHBOARD_DATABASE_URL: dbUrl, SWITCHBOARD_SECRET_KEY: secretKey }));
    let key: string;
    try {
      const repos = createRepos(store, systemClock, secrets);
      const account = await repos.accounts.create('bench-cluster');
      await repos.ledger.adjust(account.id, dollarsToMicros(1000), 'bench top-up');
      key = await repos.accounts.createKey(account.id);
    } finally {
      await store.close();
      seedDir.remove();
    }
    const edgePort = await freePort();
    const sharedEnv = {
      SWITCHBOARD_DATABASE_URL: dbUrl,
      SWITCHBOARD_SECRET_KEY: secretKey,
      SWITCHBOARD_REDIS_URL: redis.url,
      SIP_TRUSTED_PROXIES: EDGE_IP,
      SIP_OUTBOUND_PROXY: `${EDGE_IP}:${edgePort}`,
      // One budget for the whole service (Redis); the default 10/s would be what the bench measures.
      SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: '10000',
      LOG_LEVEL: 'warn',
    };
    const startNode = async (id: string, rtpMin: number) => {
      const dir = tempDir(`bench-cluster-${id}`);
      const proc = await EngineProcess.start(dir.path, { ...sharedEnv, SWITCHBOARD_NODE_ID: id, RTP_PORT_MIN: String(rtpMin), RTP_PORT_MAX: String(rtpMin + 999) });
      nodes.push({ id, proc, dir, rtp: [rtpMin, rtpMin + 999] });
    };
    await startNode('node-a', 40_000);
    const trunk = await fetch(`${nodes[0]!.proc.httpUrl}/api/user/sip-trunks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sip_trunk_type: 'number',
        phone_number: TRUNK_NUMBER,
        sip_username: 'edge',
        sip_password: 'edge-secret',
        sip_address: '127.0.0.84',
        sip_calling_format: 'e164',
        inbound_authorization_type: 'ip',
        allowed_inbound_ips: [CALLER_IP],
      }),
      signal: AbortSignal.timeout(10_000),
    });
    if (trunk.status !== 201) throw new Error(`trunk: ${trunk.status} ${await trunk.text()}`);
    await startNode('node-b', 41_000);
    edge = await KamailioEdge.start({
      ip: EDGE_IP,
      port: edgePort,
      nodes: nodes.map((n) => ({ id: n.id, host: '127.0.0.1', port: n.proc.sipPort })),
      pingIntervalS: 1,
    });
    carrier = await LoadGen.carrier(CALLER_IP);
    gen.startClock();

    const nodeOf = (call: PlacedCall): string => {
      const port = Number(/^m=audio (\d+)/m.exec(call.dialog?.remoteSdp ?? '')?.[1]);
      return nodes.find((n) => port >= n.rtp[0] && port <= n.rtp[1])?.id ?? 'unknown';
    };

    const phase = async (name: string, target: string): Promise<PhaseResult> => {
      const c = carrier!;
      const byNode: Record<string, number> = {};
      const sys0 = systemCpu();
      /** One call: INVITE → 200 → ACK → BYE at once. Returns the setup time or undefined. */
      const quick = async (): Promise<number | undefined> => {
        const call = await gen.place(c, target);
        if (call.status !== 200) return undefined;
        byNode[nodeOf(call)] = (byNode[nodeOf(call)] ?? 0) + 1;
        const bye = await gen.hangup(call);
        return bye === 200 ? call.setupMs : undefined;
      };
      // Warm-up: both nodes and the edge see a few calls before anything is measured.
      for (let i = 0; i < 6; i++) await quick();
      for (const k of Object.keys(byNode)) delete byNode[k];

      const serial: number[] = [];
      let serialFailed = 0;
      for (let i = 0; i < serialN; i++) {
        const ms = await quick();
        if (ms === undefined) serialFailed++;
        else serial.push(ms);
      }

      const rate: number[] = [];
      let rateFailed = 0;
      let next = 0;
      const nodeCpu0 = nodes.map((n) => procCpuMs(n.proc.child.pid!) ?? 0);
      const edgeCpu0 = treeCpuMs(edge!.pid);
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < rateCalls) {
            next++;
            const ms = await quick();
            if (ms === undefined) rateFailed++;
            else rate.push(ms);
          }
        }),
      );
      const wallS = (performance.now() - t0) / 1000;
      const nodeCpuMs = nodes.map((n, i) => (procCpuMs(n.proc.child.pid!) ?? 0) - nodeCpu0[i]!);
      const engineCpuMs = nodeCpuMs.reduce((s, x) => s + x, 0);
      const edgeCpuMs = treeCpuMs(edge!.pid) - edgeCpu0;

      const held: HeldResult[] = [];
      for (const level of heldLevels) {
        const calls: PlacedCall[] = [];
        const ramp: number[] = [];
        let rampFailed = 0;
        let placed = 0;
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            while (placed < level) {
              placed++;
              const call = await gen.place(c, target);
              if (call.status === 200) {
                calls.push(call);
                ramp.push(call.setupMs);
                byNode[nodeOf(call)] = (byNode[nodeOf(call)] ?? 0) + 1;
              } else rampFailed++;
            }
          }),
        );
        const probe: number[] = [];
        let probeFailed = 0;
        const holdEnd = performance.now() + holdS * 1000;
        for (let i = 0; i < probes; i++) {
          const ms = await quick();
          if (ms === undefined) probeFailed++;
          else probe.push(ms);
          const wait = (holdEnd - performance.now()) / (probes - i);
          if (wait > 0) await sleep(wait);
        }
        if (holdEnd > performance.now()) await sleep(holdEnd - performance.now());
        const up = calls.filter((x) => !x.endedEarly && x.leg.received > 0).length;
        const byes = await Promise.all(calls.map((x) => gen.hangup(x)));
        held.push({ target: level, answered: calls.length, stillUpWithMedia: up, rampSetup: stats(ramp, rampFailed), probeSetup: stats(probe, probeFailed), byeFailed: byes.filter((s) => s !== 200).length });
        await sleep(1000);
      }
      const r: PhaseResult = {
        name,
        serial: stats(serial, serialFailed),
        rate: { ...stats(rate, rateFailed), cps: rate.length / wallS, wallS, engineCpuMsPerCall: engineCpuMs / Math.max(1, rate.length), nodeCpuMs: Object.fromEntries(nodes.map((n, i) => [n.id, Math.round(nodeCpuMs[i]!)])), edgeCpuMsPerCall: edgeCpuMs / Math.max(1, rate.length) },
        held,
        byNode,
        machineBusyPct: systemBusyPct(sys0, systemCpu()),
      };
      console.log(`\n## ${name} (${target})`);
      console.log(`  serial setup: p50 ${fmt(r.serial.p50)} ms, p95 ${fmt(r.serial.p95)} ms (${r.serial.n} ok, ${r.serial.failed} failed)`);
      console.log(
        `  rate, ${inFlight} in flight: ${fmt(r.rate.cps, 1)} calls/s over ${fmt(wallS, 1)} s; setup p50 ${fmt(r.rate.p50)} ms, p95 ${fmt(r.rate.p95)} ms (${r.rate.n} ok, ${r.rate.failed} failed);` +
          ` engine CPU ${fmt(r.rate.engineCpuMsPerCall)} ms per call (all nodes; ms by node ${JSON.stringify(r.rate.nodeCpuMs)}), edge ${fmt(r.rate.edgeCpuMsPerCall)} ms`,
      );
      for (const h of held)
        console.log(
          `  held ${h.target}: ${h.answered} answered, ${h.stillUpWithMedia} still up with media after ${holdS} s, BYE failed ${h.byeFailed}; ramp setup p95 ${fmt(h.rampSetup.p95)} ms; probe setup while held p50 ${fmt(h.probeSetup.p50)} / p95 ${fmt(h.probeSetup.p95)} ms (${h.probeSetup.failed} failed)`,
        );
      console.log(`  calls by node: ${JSON.stringify(byNode)}; machine busy ${fmt(r.machineBusyPct, 0)} %`);
      return r;
    };

    // Warm-up before anything is measured: V8 optimises each node's call path only after many
    // calls, and each node compiles its own. Node A gets as many calls direct as each node gets
    // through the edge.
    const warm = async (target: string, n: number) => {
      let left = n;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (; left > 0; left--) {
            const call = await gen.place(carrier!, target);
            if (call.status === 200) await gen.hangup(call);
          }
        }),
      );
    };
    await warm(`sip:echo@127.0.0.1:${nodes[0]!.proc.sipPort}`, warmUp);
    await warm(edge.uri('echo'), warmUp * 2);
    await sleep(1000);

    // Alternating order (A B, then B A, …) so a drift in the machine's speed hits both alike.
    const direct = `sip:echo@127.0.0.1:${nodes[0]!.proc.sipPort}`;
    for (let r = 0; r < rounds; r++) {
      const pair = [
        () => phase(A_NAME, direct),
        () => phase(B_NAME, edge!.uri('echo')),
      ];
      for (const run of r % 2 ? pair.reverse() : pair) results.push(await run());
    }
    console.log(`\n## B/A (each figure the median over ${rounds} round(s) of each phase)`);
    console.log(ratioTable(results, inFlight).join('\n'));
  } finally {
    await cleanup();
    console.log(`# load average after: ${loadavg().join(' ')}`);
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ info, loadavgAfter: loadavg(), rounds, serialN, rateCalls, inFlight, holdS, probes, results }, null, 2));
}

/** Median; the mean of the middle two for an even count (two rounds: their mean). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The B/A table: each figure the median over the rounds of its phase. */
function ratioTable(results: PhaseResult[], inFlight: number): string[] {
  const as = results.filter((r) => r.name === A_NAME);
  const bs = results.filter((r) => r.name === B_NAME);
  const ratio = (x: number, y: number) => fmt(x / y, 2);
  const rows = ['| figure | A: one node direct | B: Kamailio → two nodes | B/A |', '|---|---|---|---|'];
  const row = (label: string, get: (r: PhaseResult) => number, digits = 2, withRatio = true) => {
    const a = median(as.map(get));
    const b = median(bs.map(get));
    rows.push(`| ${label} | ${fmt(a, digits)} | ${fmt(b, digits)} | ${withRatio ? ratio(b, a) : '–'} |`);
  };
  row('setup p50, one call at a time (ms)', (r) => r.serial.p50);
  row('setup p95, one call at a time (ms)', (r) => r.serial.p95);
  row(`setup rate, ${inFlight} in flight (calls/s)`, (r) => r.rate.cps, 1);
  row(`setup p50 at that rate (ms)`, (r) => r.rate.p50);
  row(`setup p95 at that rate (ms)`, (r) => r.rate.p95);
  row('engine CPU per call, both nodes (ms)', (r) => r.rate.engineCpuMsPerCall);
  row('Kamailio CPU per call (ms)', (r) => r.rate.edgeCpuMsPerCall, 2, false);
  const failed = (r: PhaseResult) => r.serial.failed + r.rate.failed + r.held.reduce((s, h) => s + h.rampSetup.failed + h.probeSetup.failed + h.byeFailed, 0);
  rows.push(`| calls failed, all rounds | ${as.reduce((s, r) => s + failed(r), 0)} | ${bs.reduce((s, r) => s + failed(r), 0)} | – |`);
  for (let i = 0; i < (as[0]?.held.length ?? 0); i++) {
    const level = as[0]!.held[i]!.target;
    const worst = (rs: PhaseResult[]) => `${Math.min(...rs.map((r) => r.held[i]!.answered))} / ${Math.min(...rs.map((r) => r.held[i]!.stillUpWithMedia))}`;
    rows.push(`| ${level} held: answered / up with media at the end (worst round) | ${worst(as)} | ${worst(bs)} | – |`);
    row(`${level} held: setup p50 of new calls (ms)`, (r) => r.held[i]!.probeSetup.p50);
    row(`${level} held: setup p95 of new calls (ms)`, (r) => r.held[i]!.probeSetup.p95);
  }
  const split = bs.map((r) => Object.entries(r.byNode).map(([k, v]) => `${k} ${v}`).join(', ')).join('; ');
  rows.push(`| calls per node in B | – | ${split} | – |`);
  return rows;
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
