/**
 * The edge fuzz campaign (test/support/edge-fuzz.ts) against the real engine, briefly: mutated
 * SIP over UDP, TCP and TLS from a trusted trunk address and from a stranger, and mutated RTP
 * into a live SRTP call from its caller's own address. Afterwards the engine still serves: HTTP
 * health, SIP over each transport, and the live call still echoes its caller. Longer campaigns:
 * `node --import tsx bench/fuzz-edge.ts --seconds 300 --seed 7`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rms } from '../../../src/audio/frame.ts';
import { SipTls } from '../../../src/sip/tls/tls-streams.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { fuzzRtp, fuzzSip } from '../../support/edge-fuzz.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { makeTestCa, type TestCa } from '../../support/tls-certs.ts';
import { ipTrunkBody, startTestEngine, type TestEngine } from '../../interop/support/engine.ts';
import { freePort } from '../../interop/support/tools.ts';

const SECONDS = Math.min(600, Number(process.env.EDGE_FUZZ_SECONDS ?? 4));
const SEED = Number(process.env.EDGE_FUZZ_SEED ?? 32);
const STRANGER = '127.0.0.7';

let ca: TestCa;
let t: TestEngine;
let tlsPort: number;

beforeAll(async () => {
  ca = makeTestCa();
  const cert = ca.issue('switchboard', ['IP:127.0.0.1']);
  tlsPort = await freePort();
  t = await startTestEngine({}, { SIP_TLS_CERT: cert.certFile, SIP_TLS_KEY: cert.keyFile, SIP_TLS_PORT: String(tlsPort), SWITCHBOARD_MAX_LOOP_DELAY_MS: '0' });
  await t.create('/user/sip-trunks', ipTrunkBody('+14155550170', { srtp: 'offered' }));
}, 30_000);
afterAll(async () => {
  await t?.close();
  ca?.remove();
});

/** Loud 8 kHz audio heard after index `from`, in ms. */
function loudMsAfter(heard: number[], from: number): number {
  let loud = 0;
  for (let i = from; i + 160 <= heard.length; i += 160) if (rms(Int16Array.from(heard.slice(i, i + 160))) > 0.05) loud += 20;
  return loud;
}

describe('the edge under a fuzz campaign', () => {
  it(`${SECONDS} s of mutated SIP (UDP, TCP, TLS) and RTP into a live SRTP call: the engine still serves everything`, async () => {
    const phone = await TestPhone.create({ host: '127.0.0.1' });
    try {
      const call = await phone.dial(`sip:echo@127.0.0.1:${t.sipPort}`, { srtp: { suite: 'AES_CM_128_HMAC_SHA1_80' } });
      expect((await call.outcome).status).toBe(200);
      expect(call.rtp.secured).toBe(true);

      const [sip, rtp] = await Promise.all([
        fuzzSip({ host: '127.0.0.1', sipPort: t.sipPort, tlsPort }, { seed: SEED, durationMs: SECONDS * 1000, sources: ['127.0.0.1', STRANGER] }),
        fuzzRtp((bytes) => call.rtp.sendDatagram(bytes), { seed: SEED + 3711, durationMs: SECONDS * 1000 }),
      ]);
      expect(sip.udp).toBeGreaterThan(100);
      expect(sip.tcp).toBeGreaterThan(5);
      expect(sip.tls).toBeGreaterThan(5);
      expect(rtp).toBeGreaterThan(100);

      // HTTP.
      expect((await fetch(`${t.httpUrl}/healthz`)).status).toBe(200);
      expect((await t.api('GET', '/user/calls?limit=5')).status).toBe(200);
      // SIP over each transport, from the trusted address (the stranger may well be banned now).
      const probe = await UserAgent.create({ host: '127.0.0.1', port: 0, userName: 'probe', tls: new SipTls({ port: 0, caFile: ca.caFile, caOnly: true }) });
      try {
        expect((await probe.options(`sip:127.0.0.1:${t.sipPort}`)).status).toBe(200);
        expect((await probe.options(`sip:127.0.0.1:${t.sipPort};transport=tcp`)).status).toBe(200);
        expect((await probe.options(`sip:127.0.0.1:${tlsPort};transport=tls`)).status).toBe(200);
      } finally {
        await probe.close();
      }
      // The live call: still up, and its caller still hears itself.
      const before = call.heard.length;
      call.rtp.playTone(440, 1500);
      await new Promise((r) => setTimeout(r, 2000));
      expect(loudMsAfter(call.heard, before)).toBeGreaterThan(600);
      expect(call.rtp.srtpRefused).toBe(0);
      expect(await call.hangup()).toBe(200);
    } finally {
      await phone.ua.close();
    }
  }, 30_000 + SECONDS * 3000);
});
