/**
 * Shows what one event-loop stall does to the outbound RTP stream (docs/bench-history.md, problem 1 of the 2026-11-21 21:07 telephony-core section): an
 * OutboundPath on a manual clock whose timer fires 200 ms late once. Prints each packet's send
 * time, RTP timestamp and their difference; before the stall the difference is 0, after it the
 * timestamps stay 160 ms behind real time for good, with no marker bit.
 *
 *   node --import tsx bench/tools/outbound-stall.ts
 */
import { pcmu } from '../../src/media/codecs/pcmu.ts';
import { OutboundPath, type OutboundPacket } from '../../src/media/rtp-session-outbound.ts';
import type { NegotiatedMedia } from '../../src/media/sdp-negotiate.ts';
import { ManualClock, type Clock } from '../../src/util/clock.ts';

const manual = new ManualClock(0);
let stallNext = 0;
const clock: Clock = {
  now: () => manual.now(),
  monotonic: () => manual.monotonic(),
  setTimeout: (fn, ms) => {
    const extra = stallNext;
    stallNext = 0;
    return manual.setTimeout(fn, ms + extra);
  },
} as Clock;
const media: NegotiatedMedia = {
  remote: { address: '192.0.2.1', port: 4000, rtcpPort: 4001 },
  codec: pcmu,
  payloadType: 0,
  receiveCodecs: new Map([[0, pcmu]]),
  ptimeMs: 20,
  direction: 'sendrecv',
  remoteHold: false,
  mediaIndex: 0,
};
const sent: Array<OutboundPacket & { at: number }> = [];
const out = new OutboundPath(media, { clock, send: (p) => sent.push({ ...p, at: manual.monotonic() }), initialTimestamp: 0 });
out.setSending(true);
manual.advance(60);
stallNext = 200; // the next timer fires 200 ms late: one blocked event loop
manual.advance(400);
for (const p of sent) {
  console.log(`sent at ${String(p.at).padStart(3)} ms  RTP ts ${String(p.timestamp).padStart(4)} (${String(p.timestamp / 8).padStart(3)} ms)  behind real time ${String(p.at - p.timestamp / 8).padStart(3)} ms  marker ${p.marker}`);
}
console.log('ticker stats', out.tickerStats);
out.close();
