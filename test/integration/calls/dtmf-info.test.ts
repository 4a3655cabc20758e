/**
 * Keys however a trunk sends them (SIP INFO, tones in the audio, RFC 4733) reach the call's
 * `dtmf` event and the call record the same way; keys we send go as INFO when the far end
 * negotiated no telephone-event. Real SIP and RTP over loopback, the engine's own server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dtmfFrequencies } from '../../../src/media/dtmf-inband.ts';
import { DTMF_RELAY } from '../../../src/sip/info-dtmf.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { PHONE_RATE, sleep } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
afterEach(async () => {
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

async function setUp(): Promise<{ h: Harness; p: TestPhone }> {
  h = await harness();
  const trunk = await h.trunk();
  await h.assistant(trunk.phoneNumberId);
  const p = await TestPhone.create({ host: '127.0.0.1' });
  phones.push(p);
  return { h, p };
}

async function recordedDigits(t: Harness): Promise<string[]> {
  const [rec] = (await t.req('GET', '/user/calls')).body as Array<{ id: number }>;
  const events = (await t.ctx.repos.calls.getById(rec!.id))!.details!.events as Array<{ type: string; digit: string }>;
  return events.filter((e) => e.type === 'dtmf').map((e) => e.digit);
}

const info = (body: string, contentType = DTMF_RELAY) => ({ body: Buffer.from(body), contentType });

describe('DTMF in SIP INFO and in-band', () => {
  it('INFO keys (dtmf-relay and dtmf) reach the session and the record; other INFO bodies get 415, Info-Package 469', async () => {
    const { h, p } = await setUp();
    const call = await p.call(h.target('+14155550100'));
    expect(call.provisional, 'our own UA supports 100rel: the 180 came reliably and was PRACKed').toContain(180);
    const session = h.server.registry.list()[0]!;
    const keys: Array<{ digit: string; source?: string }> = [];
    session.media.on('dtmf', (e) => keys.push({ digit: e.digit, source: e.source }));
    const d = call.dialog!;
    expect((await d.request('INFO', info('Signal=5\r\nDuration=160\r\n'))).status).toBe(200);
    expect((await d.request('INFO', info('#', 'application/dtmf'))).status).toBe(200);
    expect((await d.request('INFO', info('Signal=11\r\n'))).status).toBe(200); // event code of '#'
    expect((await d.request('INFO', info('Signal=x\r\n'))).status).toBe(400);
    const other = await d.request('INFO', info('<xml/>', 'application/media_control+xml'));
    expect(other.status).toBe(415);
    expect(other.headers.find((x) => x.name === 'accept')?.value).toContain(DTMF_RELAY);
    expect((await d.request('INFO', { ...info('Signal=1\r\n'), headers: [{ name: 'info-package', value: 'foo' }] })).status).toBe(469);
    expect((await d.request('INFO')).status, 'an empty INFO is a keepalive').toBe(200);
    await until(() => keys.length === 3, 2000, 'INFO keys');
    expect(keys).toEqual([
      { digit: '5', source: 'info' },
      { digit: '#', source: 'info' },
      { digit: '#', source: 'info' },
    ]);
    // The trunk chose INFO: RFC 4733 keys from it are now ignored, so one press never counts twice.
    call.rtp.play(() => undefined);
    await call.rtp.sendDtmf('9');
    await sleep(200);
    expect(keys).toHaveLength(3);
    expect(session.stats().dtmfReceived).toBe(3);
    await call.hangup();
    await until(() => h.server.registry.size === 0);
    expect(await recordedDigits(h)).toEqual(['5', '#', '#']);
  });

  it('a trunk without telephone-event: our keys go out as INFO, and its keys are heard in the audio', async () => {
    const { h, p } = await setUp();
    const call = await p.call(h.target('+14155550100'), { telephoneEvent: false });
    const session = h.server.registry.list()[0]!;
    const received: string[] = [];
    call.dialog!.on('dtmf', (e) => received.push(e.digit));
    await session.sendDtmf('12#', { durationMs: 80, gapMs: 40 });
    expect(received).toEqual(['1', '2', '#']);

    const heard: Array<{ digit: string; source?: string }> = [];
    session.media.on('dtmf', (e) => heard.push({ digit: e.digit, source: e.source }));
    // The phone plays 4 and 7 as tones (100 ms each, 100 ms apart) in its PCMU stream.
    const plan = '4 7 ';
    let n = 0;
    call.rtp.play(() => {
      const slot = Math.floor(n / 800); // 100 ms slots at 8 kHz
      if (slot >= plan.length) return undefined;
      const out = new Int16Array(160);
      for (let i = 0; i < 160; i++, n++) {
        const key = plan[Math.floor(n / 800)];
        const f = key && key !== ' ' ? dtmfFrequencies(key) : undefined;
        out[i] = f ? Math.round(5000 * Math.sin((2 * Math.PI * f[0] * n) / PHONE_RATE) + 5000 * Math.sin((2 * Math.PI * f[1] * n) / PHONE_RATE)) : 0;
      }
      return out;
    });
    await until(() => heard.length === 2, 3000, 'in-band keys');
    expect(heard).toEqual([
      { digit: '4', source: 'inband' },
      { digit: '7', source: 'inband' },
    ]);
    await call.hangup();
    await until(() => h.server.registry.size === 0);
    expect(await recordedDigits(h)).toEqual(['4', '7']);
  });
});
