/** RtpSession.tapInbound: the call tape's observer sees what the call accepted, as it arrived. */
import dgram from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { serializeRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import type { InboundTap } from '../../../src/media/rtp-session.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { sleep } from '../../support/rtp-peer.ts';
import { HOST, openPair, type Pair } from './rtp-session-setup.ts';

let open: Pair | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

class Tap implements InboundTap {
  readonly media_: Array<{ codec: string; atMs: number }> = [];
  readonly packets: Array<{ seq: number; ssrc: number; pt: number; payload: number[]; atMs: number }> = [];
  media(media: NegotiatedMedia, nowMs: number): void {
    this.media_.push({ codec: media.codec.name, atMs: nowMs });
  }
  packet(packet: RtpPacket, nowMs: number): void {
    this.packets.push({ seq: packet.sequenceNumber, ssrc: packet.ssrc, pt: packet.payloadType, payload: [...packet.payload], atMs: nowMs });
  }
}

describe('RtpSession inbound tap', () => {
  it('reports the media at once and after a re-INVITE, and every packet from the source (strangers not), with its arrival time', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    const tap = new Tap();
    const before = performance.now();
    session.tapInbound(tap);
    expect(tap.media_.map((m) => m.codec)).toEqual(['PCMU']);
    expect(tap.media_[0]!.atMs).toBeGreaterThanOrEqual(before - 1);

    const stranger = dgram.createSocket('udp4');
    stranger.bind(0, HOST);
    await once(stranger, 'listening');
    try {
      for (let i = 0; i < 5; i++) {
        const sent = performance.now();
        peer.sendPacket(0, 160 * i, new Uint8Array(160).fill(i + 1));
        stranger.send(serializeRtp({ payloadType: 0, sequenceNumber: 9000 + i, timestamp: 0, ssrc: 0xbad, payload: new Uint8Array(160) }), session.local.rtpPort, HOST);
        // Taken in the next media-clock pass (or the RTP thread's wake-up for it): wait for it, not a fixed time.
        for (let t = 0; t < 50 && tap.packets.at(-1)?.payload[0] !== i + 1; t++) await sleep(10);
        const got = tap.packets.at(-1);
        expect(got?.payload[0]).toBe(i + 1);
        expect(got!.atMs).toBeGreaterThanOrEqual(sent - 1);
      }
      await peer.sendDtmf('4', { durationMs: 40 });
      await sleep(30);
    } finally {
      stranger.close();
    }
    expect(tap.packets.filter((p) => p.pt === 0)).toHaveLength(5);
    // DTMF packets are on the tape too (the replay decodes them again).
    expect(tap.packets.filter((p) => p.pt === 101).length).toBeGreaterThanOrEqual(3);
    expect(tap.packets.some((p) => p.ssrc === 0xbad)).toBe(false);
    const seqs = tap.packets.map((p) => p.seq);
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0]! + i) & 0xffff));

    session.update(peer.media(pcma));
    expect(tap.media_.map((m) => m.codec)).toEqual(['PCMU', 'PCMA']);
    // Detached: nothing more.
    session.tapInbound(undefined);
    const count = tap.packets.length;
    peer.sendPacket(8, 10_000, new Uint8Array(160));
    await sleep(30);
    expect(tap.packets.length).toBe(count);
  });
});
