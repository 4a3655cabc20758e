/**
 * 25,000 SIP-over-TCP connections against a whole engine (startEngine, default SIP_TCP_* limits,
 * which derive from this process's descriptor limit), from 1,241 loopback addresses: the flood is
 * held at the connection cap and reset past it, while /healthz, a REST call and a new call over
 * SIP/TCP from the trunk's address (with RTP ports and audio) still work, and /metrics counts
 * the refusals. Without the limits the engine accepted every connection until accept(), bind()
 * and the HTTP server failed with EMFILE.
 *
 * The attacker is a child process (test/support/tcp-flood.mjs): its 25,000 client sockets do not
 * count against this process's descriptors. It is started with a raised descriptor limit where
 * the system allows it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countOpenFds, readSoftFdLimit } from '../../../src/sip/fd-budget.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { AUDIBLE_RMS, listen, startWorld, waitUntil, type World } from '../e2e/world.ts';

const FLOOD = fileURLToPath(new URL('../../support/tcp-flood.mjs', import.meta.url));
const CONNECTIONS = 25_000;

interface FloodResult {
  attempted: number;
  connected: number;
  failed: number;
  closedByServer: number;
  open: number;
  seconds: number;
  cpuSeconds: number;
  errors: Record<string, number>;
}

let world: World;
let phone: TestPhone;
let flood: ChildProcessWithoutNullStreams | undefined;

/** 1,240 addresses × 20 (within the per-source cap and burst: they fill the total cap) + one address × 200 (past its accept rate). */
function floodPlan(): Array<[string, number]> {
  const plan: Array<[string, number]> = [];
  for (let i = 0; plan.length < 1240; i++) plan.push([`127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`, 20]);
  plan.push(['127.2.0.1', 200]);
  expect(plan.reduce((n, [, c]) => n + c, 0)).toBe(CONNECTIONS);
  return plan;
}

function startFlood(port: number): { child: ChildProcessWithoutNullStreams; result: Promise<FloodResult> } {
  const args = JSON.stringify({ host: '127.0.0.1', port, concurrency: 400, plan: floodPlan() });
  // Room for every client socket, if the hard limit (or root) allows; else the inherited limit.
  const child = spawn('sh', ['-c', 'ulimit -n 40000 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"', process.execPath, FLOOD, args]);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const result = new Promise<FloodResult>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) resolve((JSON.parse(line) as { done: FloodResult }).done);
    });
    child.once('exit', (code) => reject(new Error(`flood exited ${code}: ${err}`)));
  });
  return { child, result };
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

beforeAll(async () => {
  world = await startWorld();
  await world.assistant();
  phone = await TestPhone.create({ userName: 'carrier' });
}, 60_000);

afterAll(async () => {
  if (flood && flood.exitCode === null) {
    flood.stdin.end('close\n');
    await Promise.race([once(flood, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
    flood.kill('SIGKILL');
  }
  await phone?.close();
  await world?.close();
});

describe('SIP over TCP under a 25,000-connection flood', () => {
  it('holds the flood at its cap, resets the rest, and the engine keeps serving REST, health and calls', async () => {
    const fdLimit = readSoftFdLimit()!;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const run = startFlood(world.sipPort);
    flood = run.child;
    const result = await run.result;
    const floodSeconds = (performance.now() - started) / 1000;
    const engineCpu = process.cpuUsage(cpu);
    console.log(
      `flood: ${JSON.stringify(result)}; ${floodSeconds.toFixed(1)} s wall, engine CPU ${((engineCpu.user + engineCpu.system) / 1e6).toFixed(1)} s; ` +
        `engine fd limit ${fdLimit}, open ${countOpenFds()}`,
    );
    expect(result.attempted).toBe(CONNECTIONS);

    const health = await fetch(`${world.engine.httpUrl}/healthz`);
    expect(health.status).toBe(200);
    const assistants = await world.api('GET', '/user/assistants');
    expect(assistants.status).toBe(200);
    expect(assistants.body.assistants).toHaveLength(1);

    // A new call over SIP/TCP from the trunk's address: admitted (room is kept for trusted
    // sources), answered with RTP ports from the engine's range, and the greeting is heard.
    const call = await phone.dial(`${world.target()};transport=tcp`);
    const log = listen(call);
    const outcome = await call.outcome;
    expect(outcome.status).toBe(200);
    const media = /m=audio (\d+) /.exec(call.dialog!.remoteSdp ?? '');
    const rtpPort = Number(media?.[1]);
    expect(rtpPort).toBeGreaterThanOrEqual(world.engine.ctx.config.rtp.portMin);
    expect(rtpPort).toBeLessThanOrEqual(world.engine.ctx.config.rtp.portMax);
    await waitUntil(() => log.some((a) => a.rms >= AUDIBLE_RMS), 15_000, 'greeting audio');
    await call.dialog!.bye();

    const stats = world.engine.sip.tcpStats;
    const refused = stats.refused.total + stats.refused.rate + stats.refused.per_source + stats.refused.fd_reserve;
    // Every attempt was admitted or refused (the phone's connection is one more), and what is
    // open is within the cap.
    expect(stats.open + refused).toBeGreaterThanOrEqual(CONNECTIONS);
    expect(stats.open).toBeLessThanOrEqual(world.engine.sip.tcpLimits.maxConnections);
    expect(stats.refused.total).toBeGreaterThan(0);
    expect(stats.refused.rate).toBeGreaterThan(0);
    // The flood still holds its connections while we check the engine.
    expect(result.open).toBeGreaterThan(0);
    const open = countOpenFds();
    if (open !== undefined) expect(open).toBeLessThan(fdLimit - 1000);

    const metrics = await (await fetch(`${world.engine.httpUrl}/metrics`)).text();
    expect(metric(metrics, 'switchboard_sip_tcp_refused_total{reason="total"}')).toBe(world.engine.sip.tcpStats.refused.total);
    expect(metric(metrics, 'switchboard_sip_tcp_refused_total{reason="rate"}')).toBeGreaterThan(0);
    expect(metric(metrics, 'switchboard_sip_tcp_connections')).toBeGreaterThan(0);
  }, 90_000);
});
