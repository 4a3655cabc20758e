/**
 * The far side of `bench/realtime.ts`, in its own process so none of its CPU is counted as the
 * engine's: the realtime model (test/support/realtime-stand-in.ts, the protocol-faithful
 * WebSocket stand-in, tone audio) and one PCMU phone leg per call (raw UDP, 20 ms, all legs on
 * one deadline timer). Each phone says a short burst every `cycleMs` (its own phase), which the
 * stand-in's server VAD turns into a caller turn and a spoken answer. Forked by realtime.ts with
 * an IPC channel; never run by hand. Requests `{ id, op, ... }` → `{ id, ok, result | error }`.
 *
 * Lifetime: exits when the parent disconnects, and on its own after `lifetimeMs` whatever happens.
 */
import dgram from 'node:dgram';
import { ulaw } from '../src/media/codecs/g711.ts';
import { serializeRtp } from '../src/media/rtp-packet.ts';
import { RealtimeStandIn } from '../test/support/realtime-stand-in.ts';

export interface ModelChildOptions {
  /** Caller turn every this often per call (ms). */
  cycleMs: number;
  /** Length of each caller burst (ms). */
  burstMs: number;
  /** What the model answers, every time. */
  answer: string;
  /** Stand-in delta pacing: 100 ms of audio per delta, one delta every this many ms. */
  deltaIntervalMs: number;
  lifetimeMs: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ModelChildOptions;
if (!process.send) throw new Error('realtime-model must be forked with an IPC channel');
const send = process.send.bind(process);
process.on('disconnect', () => process.exit(0));
setTimeout(() => process.exit(3), opts.lifetimeMs).unref();

const standIn = await RealtimeStandIn.start({
  audio: 'tone',
  chunkMs: 100,
  deltaIntervalMs: opts.deltaIntervalMs,
  fallback: { say: opts.answer },
  rateLimits: true,
});

const SILENCE = ulaw.encode(new Int16Array(160));
/** 400 Hz at about -12 dBFS, 20 ms (a whole number of periods, so every packet is the same). */
const BURST = ulaw.encode(Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 400 * i) / 8000))));

interface Phone {
  socket: dgram.Socket;
  remote: { address: string; port: number };
  seq: number;
  ts: number;
  ssrc: number;
  /** Offset of this call's turns within the cycle (calls spread evenly). */
  phaseMs: number;
  packetsIn: number;
}

const phones = new Map<number, Phone>();
const t0 = performance.now();
let slot = 0;

function tick(): void {
  const nowMs = slot * 20;
  for (const p of phones.values()) {
    const inCycle = (nowMs + p.phaseMs) % opts.cycleMs;
    const payload = inCycle < opts.burstMs ? BURST : SILENCE;
    const bytes = serializeRtp({ payloadType: 0, sequenceNumber: p.seq, timestamp: p.ts, ssrc: p.ssrc, marker: false, payload });
    p.seq = (p.seq + 1) & 0xffff;
    p.ts = (p.ts + 160) >>> 0;
    p.socket.send(bytes, p.remote.port, p.remote.address);
  }
  slot++;
  // Absolute deadlines: a late tick never shifts the ones after it.
  setTimeout(tick, Math.max(0, t0 + slot * 20 - performance.now()));
}
tick();

async function handle(msg: { op: string; [k: string]: unknown }): Promise<unknown> {
  switch (msg.op) {
    case 'phone': {
      const socket = dgram.createSocket('udp4');
      await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
      const id = Number(msg.call);
      const phone: Phone = {
        socket,
        remote: { address: '127.0.0.1', port: Number(msg.port) },
        seq: (id * 7919) & 0xffff,
        ts: (id * 104729) >>> 0,
        ssrc: (0x5b000000 + id) >>> 0,
        phaseMs: Math.round(((id * opts.cycleMs) / Math.max(1, Number(msg.of))) / 20) * 20,
        packetsIn: 0,
      };
      socket.on('message', () => phone.packetsIn++);
      phones.set(id, phone);
      return { port: socket.address().port };
    }
    case 'hangup': {
      const p = phones.get(Number(msg.call));
      phones.delete(Number(msg.call));
      p?.socket.close();
      return null;
    }
    case 'stats': {
      const cpu = process.cpuUsage();
      return {
        cpuMs: (cpu.user + cpu.system) / 1000,
        responses: standIn.connections.reduce((n, c) => n + c.responses.length, 0),
        errors: standIn.connections.reduce((n, c) => n + c.sent.filter((e) => e.type === 'error').length, 0),
        packetsIn: [...phones.values()].reduce((n, p) => n + p.packetsIn, 0),
      };
    }
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

process.on('message', (raw) => {
  const msg = raw as { id: number; op: string };
  handle(msg).then(
    (result) => send({ id: msg.id, ok: true, result }),
    (err: unknown) => send({ id: msg.id, ok: false, error: (err as Error).message }),
  );
});
send({ id: 0, ok: true, result: { baseUrl: standIn.baseUrl, apiKey: standIn.apiKey } });
