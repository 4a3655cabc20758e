/**
 * RTP_PUBLIC_HOST over whole calls (real SIP and RTP over loopback): SIP advertises 127.0.0.1 in
 * Via and Contact, the media address 127.0.0.2 is what every SDP names (inbound answers, outbound
 * offers), RTP stays bound to the wildcard address, and an echo call's audio flows both ways for
 * longer than the old connect() moment (the connect guard judges by the media address, not the
 * SIP one: connecting toward a caller on 127.0.0.1 would pin the socket to 127.0.0.1 and drop
 * what the caller sends to 127.0.0.2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseSdp } from '../../../src/media/sdp.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep, toneShare } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
afterEach(async () => {
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

const NET = { sipHost: '127.0.0.1', rtpHost: '0.0.0.0', rtpPublicHost: '127.0.0.2' };

function contactHost(value: string | undefined): string | undefined {
  return /sip:[^@>]*@([^:;>]+)/.exec(value ?? '')?.[1];
}

describe('RTP_PUBLIC_HOST', () => {
  it('an inbound answer names the media host in SDP and the SIP host in Contact; the echo flows both ways past 3.5 s', async () => {
    h = await harness({}, 10, NET);
    await h.trunk();
    const p = await TestPhone.create({ host: '127.0.0.1' });
    phones.push(p);
    const call = await p.call(h.target('echo'));
    const answer = parseSdp(call.dialog!.remoteSdp!);
    expect(answer.media[0]?.address).toBe('127.0.0.2');
    expect(call.rtp.remoteTarget?.address).toBe('127.0.0.2');
    expect(contactHost(call.dialog!.remoteTarget)).toBe('127.0.0.1');
    call.rtp.playTone(400, 6000);
    const startedAt = performance.now();
    const at = async (ms: number): Promise<number> => {
      await sleep(Math.max(0, ms - (performance.now() - startedAt)));
      return call.heard.length;
    };
    const early = await at(1000);
    const lateStart = await at(3500);
    const lateEnd = await at(5500);
    expect(toneShare(call.heard.slice(early - 4000, early), 400)).toBeGreaterThan(0.8);
    expect(lateEnd - lateStart).toBeGreaterThan(12_000);
    expect(toneShare(call.heard.slice(lateStart, lateEnd), 400)).toBeGreaterThan(0.8);
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
  }, 20_000);

  it('an outbound offer names the media host in SDP and the SIP host in Contact and Via', async () => {
    h = await harness({}, 10, NET);
    const carrier = await TestPhone.create({ userName: 'carrier' });
    phones.push(carrier);
    const trunk = await h.trunk();
    trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
    const assistant = await h.assistant(null, { ringing_time: 5 }, 'outbound');
    const res = await h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: trunk.phoneNumberId, to: '+14155550199' });
    expect(res.status).toBe(201);
    await until(() => carrier.answered.length === 1, 3000, 'answer');
    const inv = carrier.incoming[0]!;
    const offer = parseSdp(inv.request.body.toString('utf8'));
    expect(offer.media[0]?.address).toBe('127.0.0.2');
    const header = (name: string) => inv.request.headers.find((x) => x.name === name)?.value;
    expect(contactHost(header('contact'))).toBe('127.0.0.1');
    expect(header('via')).toMatch(/^SIP\/2\.0\/UDP 127\.0\.0\.1:/);
    // Media reaches the engine at the advertised media address, and comes back.
    const call = carrier.answered[0]!;
    expect(call.rtp.remoteTarget?.address).toBe('127.0.0.2');
    call.rtp.playTone(400, 300);
    await until(() => call.rtp.packetsReceived > 5, 2000, 'engine media');
    await call.hangup();
  }, 20_000);
});
