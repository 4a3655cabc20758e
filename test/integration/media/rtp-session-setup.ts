/** Shared set-up for the RtpSession loopback tests: a pool, a session, a peer wired to each other. */
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { rms } from '../../../src/audio/frame.ts';
import type { Codec } from '../../../src/media/codecs/codec.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { RtpSession, type RtpSessionOptions } from '../../../src/media/rtp-session.ts';
import { RtpPeer } from '../../support/rtp-peer.ts';
import { testRtpIo } from '../../support/rtp-io.ts';

export const HOST = '127.0.0.1';
/** A block per test process, away from the port-pool test's ranges. */
export const BASE = 20_000 + (process.pid % 40) * 1000 + 400;

export interface Pair {
  pool: PortPool;
  session: RtpSession;
  peer: RtpPeer;
  /** Every inbound frame the session delivered, with when it arrived. */
  frames: Array<{ frame: AudioFrame; atMs: number }>;
  done: Promise<void>;
  close(): Promise<void>;
}

export type PeerMediaOptions = Parameters<RtpPeer['media']>[1];

export async function openPair(
  codec: Codec,
  mediaOptions: PeerMediaOptions = {},
  sessionOptions: Partial<RtpSessionOptions> = {},
  pool = new PortPool({ host: HOST, minPort: BASE, maxPort: BASE + 199, io: testRtpIo }),
): Promise<Pair> {
  const peer = await RtpPeer.open(HOST);
  const session = new RtpSession({ pool, host: HOST, publicAddress: HOST, ...sessionOptions });
  const local = await session.allocate();
  peer.connect({ address: HOST, port: local.rtpPort, rtcpPort: local.rtcpPort });
  session.start(peer.media(codec, mediaOptions));
  const frames: Pair['frames'] = [];
  const done = (async () => {
    for await (const frame of session.inbound) frames.push({ frame, atMs: performance.now() });
  })();
  return {
    pool,
    session,
    peer,
    frames,
    done,
    async close() {
      await session.close();
      await done;
      await peer.close();
    },
  };
}

/** Indexes of the first and last frame louder than `threshold` (0..1 RMS). */
export function voicedSpan(frames: ReadonlyArray<{ frame: AudioFrame }>, threshold = 0.02): [number, number] | undefined {
  let first = -1;
  let last = -1;
  frames.forEach(({ frame }, i) => {
    if (rms(frame.samples) > threshold) {
      if (first < 0) first = i;
      last = i;
    }
  });
  return first < 0 ? undefined : [first, last];
}

export async function* tone(frames: readonly Int16Array[]): AsyncGenerator<AudioFrame> {
  for (const samples of frames) yield { samples, sampleRate: 16_000 };
}
