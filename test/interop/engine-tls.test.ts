/**
 * baresip against the real engine over SIP/TLS with SRTP required, both directions, the way an
 * operator sets it up: SIP_TLS_CERT/SIP_TLS_KEY/SIP_TLS_CA, and a trunk created over the REST API
 * with `transport: tls` and `srtp: required`. Certificates come from a private CA made at test
 * time. The trunk's carrier side is baresip on 127.0.0.5 (a trunk's sip_address has no port, so
 * the engine's TLS INVITEs go to 5061 there, where baresip listens for TLS).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { makeTestCa, type TestCa } from '../support/tls-certs.ts';
import { Baresip } from './support/baresip.ts';
import { assistantBody, ipTrunkBody, startTestEngine, type TestEngine } from './support/engine.ts';
import { findTone, freePort, heardTone, teardown, toneWav, within } from './support/tools.ts';

const TRUNK_NUMBER = '+14155550160';
const PEER_HOST = '127.0.0.5';
const PEER_NUMBER = '+14155550199';
const PEER_USER = '14155550199';

let ca: TestCa;
let t: TestEngine;
let tlsPort: number;
let trunk: { id: number; phone_number_id: number };
let peerBundle: string;

beforeAll(async () => {
  ca = makeTestCa();
  const engineCert = ca.issue('switchboard', ['IP:127.0.0.1']);
  peerBundle = ca.issue('carrier', ['IP:127.0.0.1', `IP:${PEER_HOST}`]).bundleFile;
  tlsPort = await freePort();
  t = await startTestEngine({}, { SIP_TLS_CERT: engineCert.certFile, SIP_TLS_KEY: engineCert.keyFile, SIP_TLS_CA: ca.caFile, SIP_TLS_PORT: String(tlsPort) });
  trunk = (
    // media_nat: baresip advertises 127.0.0.5 in its SDP but its RTP leaves from 127.0.0.1 (its
    // socket is bound to the wildcard), which the media lock refuses unless the trunk learns.
    await t.create('/user/sip-trunks', ipTrunkBody(TRUNK_NUMBER, { sip_address: PEER_HOST, allowed_inbound_ips: ['127.0.0.1', PEER_HOST], transport: 'tls', srtp: 'required', media_nat: true }))
  ).data;
}, 30_000);
afterAll(async () => {
  await t?.close();
  ca?.remove();
});

async function inboundEcho(from: string): Promise<Record<string, unknown>> {
  const list = await t.api('GET', '/user/calls?limit=50');
  const call = (list.body as Array<Record<string, unknown>>).find((c) => c.direction === 'inbound' && c.to_number === 'echo' && String(c.from_number).includes(from));
  if (!call) throw new Error(`no inbound echo call from ${from} in ${JSON.stringify(list.body)}`);
  return call;
}

describe.sequential('engine ⇄ baresip over SIP/TLS with SRTP required', () => {
  it('baresip calls the echo number over TLS with SRTP: it hears itself; the record names the suite', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), user: 'tls-caller', transports: ['udp', 'tls'], tls: { bundleFile: peerBundle, caFile: ca.caFile }, mediaenc: 'srtp-mand' });
    cleanups.push(() => peer.stop());
    await peer.dial(`sip:echo@127.0.0.1:${tlsPort};transport=tls`);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    await peer.waitEvent('CALL_CLOSED', 8000);
    const recording = peer.recording();
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    const record = await t.waitCall(Number((await inboundEcho('tls-caller')).id), (c) => c.ended_at !== null);
    expect(record).toMatchObject({ direction: 'inbound', status: 'completed', sip_trunk_id: trunk.id });
    const quality = record.quality as Record<string, unknown>;
    expect(quality.srtp).toMatch(/^AES_CM_128_HMAC_SHA1_(80|32)$/);
    expect(quality.srtp_auth_failed, JSON.stringify(quality)).toBe(0);
  }, 30_000);

  it('the same caller in the clear (UDP, plain RTP) is refused: the trunk requires TLS', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), user: 'clear-caller' });
    cleanups.push(() => peer.stop());
    await peer.dial(`sip:echo@127.0.0.1:${t.sipPort}`);
    const closed = await peer.waitEvent('CALL_CLOSED', 5000);
    expect(closed.param ?? '').toMatch(/403/);
  }, 20_000);

  it('the engine calls baresip through the TLS trunk (POST /user/calls): verified TLS, SRTP both ways, record completed', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const outbound = (await t.create('/user/assistant', assistantBody('outbound', trunk.phone_number_id, { ringing_time: 10 }))).data.id;
    const peer = await Baresip.start({
      sourceWav: toneWav(440, 2),
      user: PEER_USER,
      host: PEER_HOST,
      sipPort: 5060,
      transports: ['udp', 'tls'],
      tls: { bundleFile: peerBundle, caFile: ca.caFile },
      mediaenc: 'srtp-mand',
    });
    cleanups.push(() => peer.stop());
    const placed = await t.create('/user/calls', { assistant_id: outbound, phone_number_id: trunk.phone_number_id, to: PEER_NUMBER });
    const id = Number((placed.data ?? placed).id);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    await within(peer.waitEvent('CALL_CLOSED', 8000), 9000, 'baresip to hang up');
    const record = await t.waitCall(id, (c) => c.ended_at !== null);
    expect(record).toMatchObject({ direction: 'outbound', status: 'completed', to_number: PEER_NUMBER });
    const quality = record.quality as Record<string, unknown>;
    expect(quality.srtp).toMatch(/^AES_CM_128_HMAC_SHA1_(80|32)$|^AEAD_AES_(128|256)_GCM$/);
    // Every SRTP (RTP) packet authenticates: a key, ROC or SSRC mistake would show here.
    expect(quality.srtp_auth_failed, JSON.stringify(quality)).toBe(quality.srtcp_auth_failed);
    // At most one SRTCP failure, and it is baresip's: when it hangs up, baresip 1.0 (libre 1.1)
    // sends its RTCP BYE + SDES in the clear, because the stream's SRTP helper is gone before
    // libre's RTP session destructor sends the BYE (baresip issues #2638 and #3076). A capture on
    // lo showed it: from baresip's RTCP port, 68 bytes `81cb0003…0441646a6f…81ca000c…` (BYE,
    // reason "Adjo", then a CNAME in plain text), no SRTCP index or tag, sent as the call ends;
    // every other RTCP packet of baresip's was protected. Refusing it is right (RFC 3711 §3.4);
    // test/unit/media/srtp/srtp-session.test.ts replays those bytes.
    expect(quality.srtcp_auth_failed as number, JSON.stringify(quality)).toBeLessThanOrEqual(1);
    expect(quality.srtp_replayed, JSON.stringify(quality)).toBe(0);
    expect(quality.packets_received as number, JSON.stringify(quality)).toBeGreaterThan(50);
    expect(peer.recording().samples.length).toBeGreaterThan(8000);
  }, 30_000);
});
