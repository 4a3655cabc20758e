/**
 * Outbound early media over loopback: the test carrier answers the engine's INVITE with a 183
 * carrying SDP (reliable, since we say 100rel), plays audio before any answer, then answers or
 * fails the call. What the engine heard before the answer is read from its CallSession (the
 * early-audio pre-roll voicemail detection gets, and the RTP counters); what it sent from the
 * carrier's side of the wire.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resample } from '../../../src/audio/resample.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import type { CallSession } from '../../../src/call/call-session.ts';
import type { RtpSession } from '../../../src/media/rtp-session.ts';
import type { IncomingInvite } from '../../../src/sip/user-agent-incoming-invite.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { PhoneRtp, rmsOf, sleep, toneRatio } from '../../support/test-phone-rtp.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
let carrier: TestPhone | undefined;
const legs: PhoneRtp[] = [];
afterEach(async () => {
  for (const leg of legs.splice(0)) leg.close();
  await carrier?.close();
  carrier = undefined;
  await h?.close();
  h = undefined;
});

async function setup(ringingTime = 5) {
  h = await harness();
  carrier = await TestPhone.create({ userName: 'carrier' });
  // The carrier rings; each test then drives the INVITE itself (183, audio, final answer).
  carrier.answerMode = 'ring';
  const trunk = await h.trunk();
  trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
  const assistant = await h.assistant(null, { ringing_time: ringingTime }, 'outbound');
  const res = await h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: trunk.phoneNumberId, to: '+14155550199' });
  expect(res.status).toBe(201);
  await until(() => carrier!.incoming.length === 1 && h!.server.registry.list().length === 1, 3000, 'INVITE');
  const inc = carrier.incoming[0]!;
  const session = h.server.registry.list()[0]!;
  return { inc, session, id: res.body.id as number };
}

/** A media leg of the carrier's, aimed at the engine's offer. */
async function leg(inc: IncomingInvite): Promise<PhoneRtp> {
  const rtp = await PhoneRtp.open('127.0.0.1');
  legs.push(rtp);
  rtp.setRemote(inc.offer!);
  return rtp;
}

/** Plays a 16 kHz fixture from `rtp` (8 kHz PCMU), then silence. */
function play(rtp: PhoneRtp, pcm16k: Int16Array): void {
  const pcm = resample(pcm16k, 16000, 8000);
  let at = 0;
  rtp.play(() => {
    if (at >= pcm.length) return undefined;
    const out = new Int16Array(160);
    out.set(pcm.subarray(at, at + 160));
    at += 160;
    return out;
  });
}

async function record(id: number): Promise<Record<string, any>> {
  return (await h!.req('GET', `/user/calls/${id}`)).body;
}

/** Reads the session's inbound until `hz` was heard in `frames` frames (bounded by `timeoutMs`). */
async function hearTone(session: CallSession, hz: number, frames: number, timeoutMs = 3000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let heard = 0;
  const it = session.inbound[Symbol.asyncIterator]();
  while (heard < frames && Date.now() < deadline) {
    const next = await Promise.race([it.next(), sleep(200).then(() => undefined)]);
    if (!next || next.done) continue;
    const f = next.value as AudioFrame;
    if (rmsOf(f.samples) > 500 && toneRatio(f.samples, hz, 16000) > 0.8) heard++;
  }
  return heard;
}

/** Frames above -47 dBFS: at least every frame the early buffer itself counts as audible (-45 dBFS). */
const audible = (frames: AudioFrame[]) => frames.filter((f) => rmsOf(f.samples) > 150).length;

describe('outbound early media', () => {
  it('183 with SDP: the announcement reaches the engine before the answer, we send only silence, and the 200 with the same SDP keeps the session', async () => {
    const { inc, session, id } = await setup();
    const rtp = await leg(inc);
    inc.progress(rtp.sdp());
    play(rtp, loadFixture('utt-opening-hours'));
    // The engine's RTP runs before any answer, and the audio went to the early pre-roll.
    await until(() => (session.earlyAudioStats?.audibleFrames ?? 0) >= 40, 5000, 'early announcement heard');
    expect(session.state).toBe('ringing');
    expect(session.stats().packetsReceived).toBeGreaterThan(50);
    // Nothing from the ringing phase waits in (or was dropped from) the answered call's inbound.
    expect(session.stats().inboundQueueDropped).toBe(0);
    expect((await record(id)).status).toBe('ringing');
    // We send comfort silence (NAT bindings, SBC latching), never anything audible.
    await until(() => rtp.packetsReceived > 20, 2000, 'comfort silence');
    expect(rmsOf(rtp.heard)).toBeLessThan(50);
    const port = (session.media as RtpSession).local.rtpPort;

    inc.accept(rtp.sdp());
    await until(async () => (await record(id)).status === 'in-progress', 3000, 'in-progress');
    expect((session.media as RtpSession).local.rtpPort).toBe(port);
    // The early audio is there for voicemail detection: the announcement, not silence.
    expect(audible(session.takeEarlyAudio())).toBeGreaterThanOrEqual(40);
    // Media goes on through the answer: the engine hears the carrier's tone on `inbound`.
    rtp.playTone(400, 1500);
    expect(await hearTone(session, 400, 20)).toBe(20);
    const before = rtp.packetsReceived;
    await until(() => rtp.packetsReceived > before + 10, 2000, 'engine RTP after the answer');
    await session.hangup();
    expect(await record(id)).toMatchObject({ status: 'completed', end_cause: 'local-hangup' });
    expect(h!.pool.inUse).toBe(0);
  });

  it('a 200 with other SDP than the 183 (another media server) re-points the running session', async () => {
    const { inc, session, id } = await setup();
    const announcer = await leg(inc);
    inc.progress(announcer.sdp());
    play(announcer, loadFixture('utt-opening-hours'));
    await until(() => (session.earlyAudioStats?.audibleFrames ?? 0) >= 20, 5000, 'early media');
    await until(() => announcer.packetsReceived > 5, 2000, 'engine RTP to the early media server');
    const port = (session.media as RtpSession).local.rtpPort;

    const phone = await leg(inc);
    phone.playTone(600, 3000);
    inc.accept(phone.sdp());
    await until(async () => (await record(id)).status === 'in-progress', 3000, 'in-progress');
    expect((session.media as RtpSession).local.rtpPort).toBe(port);
    // The engine now hears the answering phone and sends to it, not to the announcer.
    expect(await hearTone(session, 600, 20)).toBe(20);
    await until(() => phone.packetsReceived > 20, 2000, 'engine RTP to the answering phone');
    const toAnnouncer = announcer.packetsReceived;
    await sleep(300);
    expect(announcer.packetsReceived).toBe(toAnnouncer);
    await session.hangup();
    expect(h!.pool.inUse).toBe(0);
  });

  it('a 200 without SDP after a reliable 183 with SDP answers on the 183’s media (RFC 3262)', async () => {
    const { inc, session, id } = await setup();
    const rtp = await leg(inc);
    inc.progress(rtp.sdp());
    rtp.play(() => undefined);
    await until(() => session.stats().packetsReceived > 10, 3000, 'early media');
    inc.accept('');
    await until(async () => (await record(id)).status === 'in-progress', 3000, 'in-progress');
    rtp.playTone(400, 1500);
    expect(await hearTone(session, 400, 15)).toBe(15);
    await session.hangup();
    expect((await record(id)).status).toBe('completed');
  });

  for (const [status, expected] of [
    [486, 'busy'],
    [480, 'no-answer'],
  ] as const) {
    it(`early media then ${status}: media closed, ports released, status ${expected}`, async () => {
      const { inc, session, id } = await setup();
      const rtp = await leg(inc);
      inc.progress(rtp.sdp());
      play(rtp, loadFixture('utt-opening-hours'));
      await until(() => (session.earlyAudioStats?.audibleFrames ?? 0) >= 10 && rtp.packetsReceived > 5, 5000, 'early media both ways');
      expect(h!.pool.inUse).toBeGreaterThan(0);
      inc.reject(status);
      await until(async () => !['queued', 'ringing'].includes((await record(id)).status), 3000, 'final status');
      expect(await record(id)).toMatchObject({ status: expected, end_cause: expected, answered_at: null });
      await until(() => h!.pool.inUse === 0, 2000, 'ports released');
      const heard = rtp.packetsReceived;
      await sleep(300);
      expect(rtp.packetsReceived).toBe(heard);
    });
  }

  it('early media that never turns into an answer: CANCEL at ringing_time, no-answer, ports released', async () => {
    const { inc, session, id } = await setup(1);
    const cancelled = new Promise<void>((r) => inc.once('cancel', () => r()));
    const rtp = await leg(inc);
    inc.progress(rtp.sdp());
    // Silence only: a silent early media must not end the call as an RTP timeout either.
    rtp.play(() => undefined);
    await until(() => session.stats().packetsReceived > 5, 2000, 'early media');
    await cancelled;
    await until(async () => (await record(id)).status === 'no-answer', 3000, 'no-answer');
    expect((await record(id)).end_cause).toBe('no-answer');
    await until(() => h!.pool.inUse === 0, 2000, 'ports released');
  });

  it('a SIT (intercept) in early media ends the call at once: CANCEL, invalid-number, end_cause operator-intercept', async () => {
    const { inc, id } = await setup(10);
    const cancelled = new Promise<void>((r) => inc.once('cancel', () => r()));
    const rtp = await leg(inc);
    inc.progress(rtp.sdp());
    // 913.8 / 1370.6 / 1776.7 Hz, 274 / 274 / 380 ms: "the number you have dialled is not in service".
    const segments: Array<[number, number]> = [[913.8, 274], [1370.6, 274], [1776.7, 380]];
    let n = 0;
    const total = segments.reduce((s, [, ms]) => s + ms * 8, 0);
    rtp.play(() => {
      if (n >= total) return undefined;
      const out = new Int16Array(160);
      for (let i = 0; i < 160; i++, n++) {
        let t = n;
        let hz = 0;
        for (const [f, ms] of segments) {
          if (t < ms * 8) {
            hz = f;
            break;
          }
          t -= ms * 8;
        }
        out[i] = hz ? Math.round(8000 * Math.sin((2 * Math.PI * hz * n) / 8000)) : 0;
      }
      return out;
    });
    const started = Date.now();
    await cancelled;
    expect(Date.now() - started).toBeLessThan(3000);
    await until(async () => (await record(id)).status === 'invalid-number', 3000, 'final status');
    expect((await record(id)).end_cause).toBe('operator-intercept');
    await until(() => h!.pool.inUse === 0, 2000, 'ports released');
  });
});
