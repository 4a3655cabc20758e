/**
 * SRTP's cost, in one run:
 *
 * 1. Per packet, in process: protect + unprotect of a 20 ms G.711 packet (12-byte header, 160
 *    bytes of payload) for each suite, on the C transforms (native/rtp-udp/srtp_transform.c,
 *    when built) and on the node:crypto fallback; µs per packet (best of `--rounds`, median in
 *    brackets) and young-generation GCs per 10 000 packets (what per-packet allocation costs).
 * 2. Per call, the engine in its own process (lib/engine-child.ts, as the calls benchmark runs
 *    it): `--calls` echo calls over plain RTP, then the same number over SRTP
 *    (AES_CM_128_HMAC_SHA1_80 unless `--suite`), alternating `--rounds` times so that both see
 *    the same machine; engine CPU per call (whole process, /proc, minus its idle CPU) for each,
 *    and the ratio.
 *
 * With `--rtp-native 0` the engine runs with SWITCHBOARD_RTP_NATIVE=0: dgram sockets, the
 * TypeScript inbound path for every call, and SRTP on node:crypto (the fallback's cost per call).
 *
 *   node --import tsx bench/srtp.ts [--calls 50] [--window 10] [--rounds 2] [--suite NAME]
 *        [--packets 20000] [--micro-only] [--rtp-native 0|1] [--json FILE]
 */
import { PerformanceObserver, constants as perfConstants, performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { spawnEngine, type EngineProc } from './lib/engine-proc.ts';
import { LoadGen, provisionCarriers, type Carrier, type PlacedCall } from './lib/loadgen.ts';
import { cores, loadavg, machineInfo } from './lib/machine.ts';
import { fmt } from './lib/stats.ts';
import { num, parseArgs, sleep, watchdog } from './lib/cli.ts';
import type { CipherFactory } from '../src/media/srtp/cipher.ts';
import { nodeCipherFactory } from '../src/media/srtp/cipher-node.ts';
import { loadNativeCipherFactory } from '../src/media/srtp/cipher-native.ts';
import { SrtpSession } from '../src/media/srtp/srtp-session.ts';
import { SRTP_SUITES, suiteByName, type SrtpSuiteName } from '../src/media/srtp/suites.ts';

const args = parseArgs(process.argv.slice(2));
const callsN = num(args, 'calls', 50, 1, 150);
const windowS = num(args, 'window', 10, 2, 60);
const rounds = num(args, 'rounds', 2, 1, 10);
const packets = num(args, 'packets', 20_000, 1000, 1_000_000);
const suiteName = (args.get('suite') ?? 'AES_CM_128_HMAC_SHA1_80') as SrtpSuiteName;
if (!suiteByName(suiteName)) throw new Error(`unknown suite ${suiteName}`);
const microOnly = args.has('micro-only');
const rtpNative = args.get('rtp-native') === '0' ? '0' : '1';
const jsonOut = args.get('json');

interface MicroRow {
  suite: string;
  impl: string;
  usBest: number;
  usMedian: number;
  scavengesPer10k: number;
}

let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
}).observe({ entryTypes: ['gc'] });

/** protect + unprotect of `packets` G.711 packets; µs per packet per round. */
async function micro(factory: CipherFactory, name: SrtpSuiteName): Promise<MicroRow> {
  const suite = suiteByName(name)!;
  const ka = { key: randomBytes(suite.keyLength), salt: randomBytes(suite.saltLength) };
  const kb = { key: randomBytes(suite.keyLength), salt: randomBytes(suite.saltLength) };
  const tx = new SrtpSession(suite, ka, kb, factory);
  const rx = new SrtpSession(suite, kb, ka, factory);
  const buf = Buffer.alloc(12 + 160 + 32);
  const payload = randomBytes(160);
  let seq = 0;
  const one = () => {
    buf[0] = 0x80;
    buf[1] = 0;
    buf.writeUInt16BE(seq, 2);
    buf.writeUInt32BE((seq * 160) >>> 0, 4);
    buf.writeUInt32BE(0x01020304, 8);
    payload.copy(buf, 12);
    seq = (seq + 1) & 0xffff;
    const n = tx.protectRtp(buf, 172);
    if (rx.unprotectRtp(buf, n) !== 172) throw new Error('round trip failed');
  };
  for (let i = 0; i < 2000; i++) one();
  // GC entries reach the observer asynchronously: let the warm-up's arrive before counting.
  await sleep(50);
  const times: number[] = [];
  const s0 = scavenges;
  const roundsMicro = 5;
  for (let r = 0; r < roundsMicro; r++) {
    const t0 = performance.now();
    for (let i = 0; i < packets; i++) one();
    times.push(((performance.now() - t0) * 1000) / packets);
  }
  await sleep(50);
  const sorted = [...times].sort((a, b) => a - b);
  return {
    suite: name,
    impl: factory.label,
    usBest: sorted[0]!,
    usMedian: sorted[Math.floor(sorted.length / 2)]!,
    scavengesPer10k: ((scavenges - s0) / (packets * roundsMicro)) * 10_000,
  };
}

interface CallRound {
  mode: 'plain' | 'srtp';
  calls: number;
  engineCpuPct: number;
  perCallPctCore: number;
  srtpRefusedAtPhones: number;
}

async function engineCpuPct(engine: EngineProc, seconds: number): Promise<number> {
  const p0 = engine.procCpuMs();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const p1 = engine.procCpuMs();
  const wall = performance.now() - t0;
  if (p0 === undefined || p1 === undefined) throw new Error('no /proc CPU for the engine');
  return ((p1 - p0) / (wall * cores())) * 100;
}

async function placeAll(gen: LoadGen, carriers: Array<Carrier & { number: string }>, target: (c: Carrier) => string, n: number, suite?: SrtpSuiteName): Promise<PlacedCall[]> {
  const placed: PlacedCall[] = [];
  for (let i = 0; i < n; i++) {
    const c = carriers[i % carriers.length]!;
    placed.push(await gen.place(c, target(c), 10_000, suite ? (leg) => leg.secure(suite) : undefined));
    await sleep(20);
  }
  const failed = placed.filter((p) => p.status !== 200);
  if (failed.length > 0) throw new Error(`${failed.length} of ${n} calls failed to set up (first status ${failed[0]!.status})`);
  return placed;
}

async function callsPart(): Promise<{ idleCpuPct: number; rounds: CallRound[] }> {
  const budgetMs = 60_000 + rounds * 2 * (windowS + 8 + callsN * 0.05) * 1000;
  watchdog(budgetMs + 30_000, 'srtp benchmark');
  // The loop-delay guard off: on a shared machine it would refuse calls mid-ramp; this measures CPU, not admission.
  const engine = await spawnEngine({ accounts: 1, lifetimeMs: budgetMs + 20_000, rtpPortMin: 40_000, rtpPortMax: 40_000 + callsN * 2 + 200, env: { SWITCHBOARD_MAX_LOOP_DELAY_MS: '0', SWITCHBOARD_RTP_NATIVE: rtpNative } });
  const gen = new LoadGen();
  let carriers: Array<Carrier & { number: string }> = [];
  const out: CallRound[] = [];
  try {
    carriers = await provisionCarriers(engine, 1, { srtp: 'offered' });
    const target = () => `sip:echo@127.0.0.1:${engine.sipPort}`;
    gen.startClock();
    // Warm-up on both paths (JIT, cipher contexts), then the idle baseline.
    const warm = [...(await placeAll(gen, carriers, target, 3)), ...(await placeAll(gen, carriers, target, 3, suiteName))];
    await sleep(2000);
    await Promise.all(warm.map((c) => gen.hangup(c)));
    await sleep(1500);
    const idleCpuPct = await engineCpuPct(engine, 3);
    console.log(`# engine idle: ${fmt(idleCpuPct, 2)} % of ${cores()} cores`);
    for (let r = 0; r < rounds; r++) {
      for (const mode of ['plain', 'srtp'] as const) {
        const calls = await placeAll(gen, carriers, target, callsN, mode === 'srtp' ? suiteName : undefined);
        await sleep(2000);
        const cpu = await engineCpuPct(engine, windowS);
        const refused = calls.reduce((a, c) => a + c.leg.srtpRefused, 0);
        const audible = calls.reduce((a, c) => a + c.leg.received, 0);
        await Promise.all(calls.map((c) => gen.hangup(c)));
        if (audible === 0) throw new Error(`${mode}: the phones received nothing`);
        const row: CallRound = { mode, calls: callsN, engineCpuPct: cpu, perCallPctCore: ((cpu - idleCpuPct) * cores()) / callsN, srtpRefusedAtPhones: refused };
        out.push(row);
        console.log(`round ${r + 1} ${mode.padEnd(5)}: ${callsN} calls, engine ${fmt(cpu, 2)} % of ${cores()} cores, ${fmt(row.perCallPctCore, 3)} % of a core per call${mode === 'srtp' ? `, ${refused} packets refused at the phones` : ''}`);
        await sleep(1500);
      }
    }
    return { idleCpuPct, rounds: out };
  } finally {
    await gen.close(carriers);
    await engine.close();
  }
}

const info = machineInfo();
console.log(`# srtp benchmark — ${info.date}`);
console.log(`# ${info.cores} cores, ${info.cpuModel}, node ${info.node}; load average before: ${info.loadavg.join(' ')}`);
const native = loadNativeCipherFactory();
const factories = [...(native ? [native] : []), nodeCipherFactory];
if (!native) console.log('# native/rtp-udp is not built (or has no SRTP): node:crypto only');
const microRows: MicroRow[] = [];
console.log(`\n## per packet: protect + unprotect of a 172-byte G.711 packet, ${packets} packets × 5 rounds`);
console.log('| suite | transform | µs per packet, best [median] | young GCs per 10k packets |');
console.log('|---|---|---|---|');
for (const s of SRTP_SUITES) {
  for (const f of factories) {
    const row = await micro(f, s.name);
    microRows.push(row);
    console.log(`| ${row.suite} | ${row.impl} | ${fmt(row.usBest, 2)} [${fmt(row.usMedian, 2)}] | ${fmt(row.scavengesPer10k, 2)} |`);
  }
}
let calls: Awaited<ReturnType<typeof callsPart>> | undefined;
if (!microOnly) {
  console.log(`\n## per call: ${callsN} echo calls plain, then over SRTP (${suiteName}, ${native && rtpNative === '1' ? 'native' : 'node:crypto'} transforms, SWITCHBOARD_RTP_NATIVE=${rtpNative}), ${rounds} round(s) of ${windowS} s each`);
  calls = await callsPart();
  const avg = (mode: 'plain' | 'srtp') => {
    const xs = calls!.rounds.filter((r) => r.mode === mode).map((r) => r.perCallPctCore);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const plain = avg('plain');
  const srtp = avg('srtp');
  console.log(`# CPU per call: plain RTP ${fmt(plain, 3)} %, SRTP ${fmt(srtp, 3)} % of a core; SRTP / plain = ${fmt(srtp / plain, 2)}`);
}
console.log(`# load average after: ${loadavg().join(' ')}`);
if (jsonOut) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(jsonOut, JSON.stringify({ info, micro: microRows, calls, suite: suiteName }, null, 2));
}
process.exit(0);
