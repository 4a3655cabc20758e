/**
 * RtpSession connects its RTP socket only after LATCH_WINDOW_MS, when the source filter of its
 * InboundPath can no longer change its mind (rtp-session.ts, aimRtp). That rests on the two
 * windows being the same length: these pin it, so changing one without the other fails here.
 */
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { LATCH_WINDOW_MS } from '../../../src/media/rtp-session.ts';
import { InboundPath } from '../../../src/media/rtp-session-inbound.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';
import type { TransportAddress } from '../../../src/media/source-filter.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

const SDP = { address: '192.0.2.1', port: 4000 };
const NAT = { address: '198.51.100.7', port: 5000 };

function path() {
  const latched: TransportAddress[] = [];
  const inbound = new InboundPath(pcmuMedia(), 0, new DropOldestQueue<AudioFrame>(10), { dtmf: () => undefined, latched: (s) => latched.push(s) });
  return { inbound, latched };
}

const packet = (seq: number): RtpPacket => {
  const parsed = parseRtp(serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 9, payload: new Uint8Array(160) }));
  if (!parsed.ok) throw new Error('bad packet');
  return parsed.packet;
};

describe("the session's latch window is its source filter's", () => {
  it('a NAT source can pass probation up to LATCH_WINDOW_MS after start, not after', () => {
    const inside = path();
    for (let seq = 1; seq <= 4; seq++) inside.inbound.receive(packet(seq), NAT, LATCH_WINDOW_MS);
    expect(inside.latched).toEqual([NAT]);

    const outside = path();
    for (let seq = 1; seq <= 4; seq++) outside.inbound.receive(packet(seq), NAT, LATCH_WINDOW_MS + 1);
    expect(outside.latched).toEqual([]);
    expect(outside.inbound.droppedByFilter).toBe(4);
  });

  it('the SDP address can reclaim a NAT latch up to LATCH_WINDOW_MS after start, not after', () => {
    const inside = path();
    for (let seq = 1; seq <= 4; seq++) inside.inbound.receive(packet(seq), NAT, 10);
    inside.inbound.receive(packet(100), SDP, LATCH_WINDOW_MS);
    expect(inside.latched).toEqual([NAT, SDP]);

    const outside = path();
    for (let seq = 1; seq <= 4; seq++) outside.inbound.receive(packet(seq), NAT, 10);
    outside.inbound.receive(packet(100), SDP, LATCH_WINDOW_MS + 1);
    expect(outside.latched).toEqual([NAT]);
  });
});
