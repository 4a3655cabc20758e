/**
 * The RTP I/O thread's lost-thread policy over real threads and sockets (src/media/rtp-io/
 * loss-policy.ts, thread-io.ts): a thread that does not start still gives the call a working
 * socket, on the event-loop thread; after three threads lost within a minute, new sockets go
 * there without starting a thread, for 10 s, then the thread is tried again.
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FIRST_FALLBACK_MS } from '../../../src/media/rtp-io/loss-policy.ts';
import { RtpIoThread } from '../../../src/media/rtp-io/thread-io.ts';
import type { RtpSocket } from '../../../src/media/rtp-io/types.ts';
import { sleep } from '../../support/rtp-peer.ts';

const HOST = '127.0.0.1';

function capturingLogger(): { logger: pino.Logger; lines: Array<{ msg: string; fallbackMs?: number }> } {
  const lines: Array<{ msg: string; fallbackMs?: number }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string; fallbackMs?: number });
      done();
    },
  });
  return { logger: pino({ level: 'error' }, sink), lines };
}

/** The socket carries datagrams both ways with a plain dgram peer. */
async function carries(socket: RtpSocket): Promise<void> {
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => peer.bind(0, HOST, resolve));
  const got = once(peer, 'message');
  socket.send(Buffer.from([0x80, 0, 0, 1]), peer.address().port, HOST);
  const [msg] = (await got) as [Buffer];
  expect([...msg]).toEqual([0x80, 0, 0, 1]);
  const back = once(socket, 'message');
  peer.send(Buffer.from([0x80, 0, 0, 2]), socket.address().port, HOST);
  const [reply] = (await back) as [Buffer];
  expect([...reply]).toEqual([0x80, 0, 0, 2]);
  await new Promise<void>((resolve) => peer.close(resolve));
}

/** An I/O thread on `entry` (test/support), its lost-thread policy on a clock the test moves. */
function threadOn(entry: string): { io: RtpIoThread; lines: Array<{ msg: string; fallbackMs?: number }>; advance(ms: number): void } {
  let now = 0;
  const { logger, lines } = capturingLogger();
  const io = new RtpIoThread({ workerUrl: new URL(`../../support/${entry}`, import.meta.url), now: () => now, logger });
  return { io, lines, advance: (ms) => (now += ms) };
}

describe('RTP I/O thread: threads that keep failing', () => {
  it('a thread that cannot start: the call still gets a working socket; from the third, no thread is started for 10 s', async () => {
    const { io, lines, advance } = threadOn('rtp-worker-unstartable.mjs');
    for (let i = 1; i <= 3; i++) {
      const socket = await io.bind(HOST, 0);
      expect(socket).toBeDefined();
      await carries(socket!);
      socket!.close();
      expect(io.starts).toBe(i);
      expect(io.counters.inThreadBinds).toBe(i);
    }
    expect(lines.map((l) => l.msg)).toEqual([
      'RTP I/O thread lost: its calls lose their media; the next call starts a new thread',
      'RTP I/O thread lost: its calls lose their media; the next call starts a new thread',
      'RTP I/O thread lost again: new calls send and receive RTP on the event-loop thread for a while',
    ]);
    expect(lines[2]!.fallbackMs).toBe(FIRST_FALLBACK_MS);

    advance(FIRST_FALLBACK_MS - 1);
    const meanwhile = await io.bind(HOST, 0);
    await carries(meanwhile!);
    meanwhile!.close();
    expect(io.starts).toBe(3);
    expect(io.counters.inThreadBinds).toBe(4);

    // Tried again once the 10 s are over; lost again at once, so twice as long now.
    advance(1);
    const after = await io.bind(HOST, 0);
    await carries(after!);
    after!.close();
    expect(io.starts).toBe(4);
    expect(lines.at(-1)!.fallbackMs).toBe(2 * FIRST_FALLBACK_MS);
    await io.close();
  });

  it('a thread that dies after starting: its sockets close; after the third such loss in a minute new sockets are in-thread', async () => {
    const { io, lines, advance } = threadOn('rtp-worker-crashing.mjs');
    for (let i = 1; i <= 3; i++) {
      const socket = await io.bind(HOST, 0);
      expect(io.starts).toBe(i);
      expect(io.counters.inThreadBinds).toBe(0);
      await carries(socket!);
      // The thread ends under the socket: an error, then 'close', as a lost thread's sockets do.
      const errors: Error[] = [];
      socket!.on('error', (e) => errors.push(e));
      await new Promise<void>((resolve) => socket!.on('close', () => resolve()));
      expect(errors.map((e) => e.message)).toEqual(['RTP I/O thread exited with code 1']);
      advance(1_000);
    }
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fallbackMs).toBe(FIRST_FALLBACK_MS);
    const socket = await io.bind(HOST, 0);
    expect(io.starts).toBe(3);
    expect(io.counters.inThreadBinds).toBe(1);
    await carries(socket!);
    await sleep(400); // an in-thread socket outlives what would have ended a thread
    await carries(socket!);
    socket!.close();
    await io.close();
  });
});
