/**
 * Net::SIP (Perl) as the real peer for RFC 3262 and DTMF in SIP INFO: it calls our UAS with
 * `Require: 100rel` (which got 420 before 100rel was supported), PRACKs the reliable 180 our UAS
 * sends, then presses keys in INFO that must reach our session's `dtmf` event.
 */
import { describe, it } from 'vitest';
import { MediaUa } from './support/media-ua.ts';
import { NetSipPeer } from './support/netsip.ts';
import { teardown, within } from './support/tools.ts';

describe('Net::SIP ⇄ our UserAgent: 100rel and INFO DTMF', () => {
  it('Require: 100rel gets a reliable 180, its PRACK lets the call up, INFO keys reach the session', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    const peer = await NetSipPeer.callPrackInfo({ to: engine.uri('echo'), toneHz: 600, keys: '159#' });
    cleanups.push(() => peer.stop());

    await peer.waitEvent('established', 5000);
    const p180 = peer.events.find((e) => e.event === 'provisional' && e.code === 180)!;
    expect(p180).toMatchObject({ code: 180, reliable: 1 });
    expect((await peer.waitEvent('prack-sent', 3000)).rack).toBe(`${p180.rseq} 1 INVITE`);
    const call = await engine.call(0);
    await peer.waitEvent('bye', 8000);
    expect(peer.events.filter((e) => e.event === 'info').map((e) => [e.digit, e.code])).toEqual([
      ['1', 200],
      ['5', 200],
      ['9', 200],
      ['#', 200],
    ]);
    expect(call.dtmf.join('')).toBe('159#');
    expect(await within(call.ended, 3000, 'the BYE')).toBe('remote-bye');
    expect(await peer.finished()).toBe(0);
    // One reliable 180 only (no resend after the PRACK), and nothing left pending in our UA.
    expect(peer.events.filter((e) => e.event === 'provisional' && e.code === 180)).toHaveLength(1);
    expect(engine.ua.stats.pending).toBe(0);
  });
});
