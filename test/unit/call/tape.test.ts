import { describe, expect, it } from 'vitest';
import { isCallTape, negotiatedFromTape, parseCallTape, PacketLog, TapeRecorder, TAPE_KIND, type CallTapeFile } from '../../../src/call/tape.ts';
import type { RtpPacket } from '../../../src/media/rtp-packet.ts';
import { CallerStream, g711Media } from '../../support/call-tape.ts';

const ORIGIN = 5_000;

function recorded(stream: CallerStream, opts: ConstructorParameters<typeof TapeRecorder>[0] = { call: { uuid: 'u-1', direction: 'inbound' }, originMs: ORIGIN }) {
  const rec = new TapeRecorder(opts);
  rec.media(g711Media(), ORIGIN);
  for (const a of stream.sorted()) rec.packet(a.packet, ORIGIN + a.atMs);
  return rec;
}

describe('call tape: recorder and format', () => {
  it('round-trips every packet field, the media, DTMF and call events through JSON', () => {
    const stream = new CallerStream().audio(0, 25, 440).key(600, '7').audio(800, 10, 0);
    const rec = recorded(stream);
    rec.dtmf('7', 100, ORIGIN + 689.5);
    const reinvite = g711Media('pcma');
    rec.media(reinvite, ORIGIN + 1_000.004);
    const late: RtpPacket = { payloadType: 8, sequenceNumber: 65_535, timestamp: 0xffffffff, ssrc: 0xfedcba98, marker: true, csrcs: [], payload: Uint8Array.of(1, 2, 255), paddingLength: 0 };
    rec.packet(late, ORIGIN + 1_020.126);
    rec.hangup('remote-hangup', ORIGIN + 1_100);
    // Nothing is kept after the hang-up.
    rec.packet(late, ORIGIN + 1_200);
    rec.dtmf('1', 100, ORIGIN + 1_200);

    const file = JSON.parse(JSON.stringify(rec)) as CallTapeFile;
    expect(file).toMatchObject({ kind: TAPE_KIND, version: 1, call: { uuid: 'u-1', direction: 'inbound' }, startedAtMs: 0, endedAtMs: 1100, truncated: false });
    expect(file.packetFields).toEqual(['atMs', 'sequenceNumber', 'timestamp', 'ssrc', 'marker', 'payloadType', 'payload']);
    expect(file.events).toEqual([
      { atMs: 0, type: 'answered' },
      { atMs: 689.5, type: 'dtmf', digit: '7', durationMs: 100 },
      { atMs: 1000, type: 'reinvite', media: 1, codec: 'PCMA' },
      { atMs: 1100, type: 'hangup', cause: 'remote-hangup' },
    ]);
    expect(file.media[0]).toEqual({
      atMs: 0,
      codec: 'PCMU',
      payloadType: 0,
      clockRate: 8000,
      channels: 1,
      ptimeMs: 20,
      telephoneEvent: { payloadType: 101, clockRate: 8000 },
      receive: [{ payloadType: 0, codec: 'PCMU', clockRate: 8000, channels: 1 }],
      direction: 'sendrecv',
      remoteHold: false,
    });
    expect(isCallTape(file)).toBe(true);
    expect(isCallTape({ audio: [] })).toBe(false);

    const tape = parseCallTape(file);
    const sent = stream.sorted();
    expect(tape.packets).toHaveLength(sent.length + 1);
    sent.forEach((a, i) => {
      const p = tape.packets[i]!;
      expect(p).toMatchObject({ atMs: a.atMs, sequenceNumber: a.packet.sequenceNumber, timestamp: a.packet.timestamp, ssrc: a.packet.ssrc, marker: a.packet.marker, payloadType: a.packet.payloadType });
      expect([...p.payload]).toEqual([...a.packet.payload]);
    });
    expect(tape.packets.at(-1)).toMatchObject({ atMs: 1020.13, sequenceNumber: 65_535, timestamp: 0xffffffff, ssrc: 0xfedcba98, marker: true, payloadType: 8 });
    expect([...tape.packets.at(-1)!.payload]).toEqual([1, 2, 255]);

    // The tape's media is what the inbound chain negotiates (the address stands in for the far end's).
    const back = negotiatedFromTape(tape.media[1]!, { address: '192.0.2.1', port: 1, rtcpPort: 2 });
    expect(back).toMatchObject({ payloadType: 8, dtmfPayloadType: 101, dtmfClockRate: 8000, ptimeMs: 20, direction: 'sendrecv', remoteHold: false });
    expect(back.codec).toBe(reinvite.codec);
    expect([...back.receiveCodecs.keys()]).toEqual([8]);
  });

  it('copies payloads out of their datagrams', () => {
    const log = new PacketLog();
    const datagram = Uint8Array.of(9, 9, 9, 9);
    log.push(1, { payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, marker: false, csrcs: [], payload: datagram.subarray(1, 3), paddingLength: 0 });
    datagram.fill(0);
    expect([...[...log.packets()][0]!.payload]).toEqual([9, 9]);
  });

  it('holds a 20-minute G.711 call in about its payload size, and stops at its limits', () => {
    const rec = new TapeRecorder({ call: { uuid: 'long', direction: 'inbound' }, originMs: 0 });
    rec.media(g711Media(), 0);
    const payload = new Uint8Array(160).fill(0x55);
    const packets = 20 * 60 * 50;
    for (let i = 0; i < packets; i++) {
      rec.packet({ payloadType: 0, sequenceNumber: i & 0xffff, timestamp: (i * 160) >>> 0, ssrc: 7, marker: false, csrcs: [], payload, paddingLength: 0 }, i * 20);
    }
    expect(rec.packetCount).toBe(packets);
    // 9.6 MB of payload; headers and chunk slack stay under 2 MB more.
    expect(rec.bytes).toBeGreaterThanOrEqual(packets * 160);
    expect(rec.bytes).toBeLessThan(packets * 160 + 2_000_000);
    const json = JSON.stringify(rec);
    // Base64 payload plus about 40 characters of header per packet.
    expect(json.length).toBeLessThan(packets * (216 + 50));

    const capped = new TapeRecorder({ call: { uuid: 'capped', direction: 'inbound' }, originMs: 0, maxPackets: 100 });
    capped.media(g711Media(), 0);
    for (let i = 0; i < 150; i++) capped.packet({ payloadType: 0, sequenceNumber: i, timestamp: i * 160, ssrc: 7, marker: false, csrcs: [], payload, paddingLength: 0 }, i * 20);
    capped.dtmf('1', 100, 3_000);
    capped.hangup('local-hangup', 3_100);
    const file = capped.toJSON();
    expect(file.packets).toHaveLength(100);
    expect(file.truncated).toBe(true);
    expect(file.events.map((e) => e.type)).toEqual(['answered', 'dtmf', 'hangup']);

    const bytesCapped = new TapeRecorder({ call: { uuid: 'b', direction: 'inbound' }, originMs: 0, maxPayloadBytes: 1_000 });
    bytesCapped.media(g711Media(), 0);
    for (let i = 0; i < 10; i++) bytesCapped.packet({ payloadType: 0, sequenceNumber: i, timestamp: i * 160, ssrc: 7, marker: false, csrcs: [], payload, paddingLength: 0 }, i * 20);
    expect(bytesCapped.packetCount).toBe(6);
  });

  it('keeps no packets before it knows the media', () => {
    const rec = new TapeRecorder({ call: { uuid: 'x', direction: 'outbound' }, originMs: 0 });
    const p = new CallerStream().audio(0, 3, 300).sorted()[0]!.packet;
    rec.packet(p, 10);
    expect(rec.packetCount).toBe(0);
    rec.media(g711Media(), 2_000);
    rec.packet(p, 2_010);
    expect(rec.toJSON()).toMatchObject({ startedAtMs: 2000, packets: [[2010, p.sequenceNumber, p.timestamp, p.ssrc, 1, 0, expect.any(String)]] });
  });

  it('refuses what it cannot replay, naming the problem', () => {
    const good = recorded(new CallerStream().audio(0, 2, 300)).toJSON();
    expect(() => parseCallTape({ ...good, version: 2 })).toThrow(/version 2 is not supported/);
    expect(() => parseCallTape({ ...good, media: [] })).toThrow(/media/);
    const badRow = { ...good, packets: [[0, 70_000, 0, 0, 0, 0, '']] };
    expect(() => parseCallTape(badRow)).toThrow(/packets\.0\.1/);
    expect(() => parseCallTape({ ...good, packets: [[0, 1, 0, 0, 0, 0, '!!not base64']] })).toThrow(/packets\.0\.6/);
    const amr = { payloadType: 0, codec: 'AMR', clockRate: 8000, channels: 1 };
    const unknownCodec = { ...good, media: [{ ...good.media[0]!, ...amr, receive: [amr] }] };
    expect(() => negotiatedFromTape(parseCallTape(unknownCodec).media[0]!, { address: 'x', port: 1, rtcpPort: 2 })).toThrow(/AMR\/8000/);
  });
});
