import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { Dialog, type DialogHost } from '../../../src/sip/dialog.ts';
import { uasAddressing } from '../../../src/sip/dialog-requests.ts';
import { header, type SipRequest, type SipResponse } from '../../../src/sip/message.ts';
import { buildResponse } from '../../../src/sip/transaction-response.ts';
import { ServerNonInviteTransaction } from '../../../src/sip/transaction-server.ts';
import { DEFAULT_TIMERS, type Destination, type TxAction } from '../../../src/sip/transaction-types.ts';
import { request } from './helpers.ts';

const dest: Destination = { transport: 'udp', address: '127.0.0.1', port: 5060 };

function setup(remoteAllow: string[] = []) {
  const clock = new ManualClock(0);
  const requests: { at: number; req: SipRequest }[] = [];
  const responses: { at: number; res: SipResponse }[] = [];
  const host: DialogHost = {
    clock,
    timers: { ...DEFAULT_TIMERS },
    minSeSec: 90,
    sendRequest: (req) => {
      requests.push({ at: clock.now(), req });
      return Promise.resolve(buildResponse(req, 200, { headers: [{ name: 'session-expires', value: '120;refresher=uac' }] }));
    },
    sendAck: () => undefined,
    sendResponse: (res) => void responses.push({ at: clock.now(), res }),
    dialogEnded: () => undefined,
  };
  const invite = request('INVITE');
  invite.headers.push({ name: 'contact', value: '<sip:alice@127.0.0.1:5060>' });
  const dialog = new Dialog(host, {
    role: 'uas',
    addressing: uasAddressing(invite, 'bobtag', '<sip:bob@127.0.0.1:5070>'),
    localSeq: 0,
    remoteSeq: 1,
    localSdp: 'v=0\r\n',
    remoteSdp: undefined,
    remoteAllow,
  });
  const ended: string[] = [];
  dialog.on('ended', (e) => ended.push(e.reason));
  return { clock, host, dialog, invite, requests, responses, ended };
}

function inDialog(method: string, cseq: number): SipRequest {
  const req = request(method, { cseq, toTag: 'bobtag' });
  req.headers = req.headers.map((h) => (h.name === 'to' ? { name: 'to', value: '<sip:bob@127.0.0.1>;tag=bobtag' } : h));
  return req;
}

function fakeTx(req: SipRequest, clock: ManualClock) {
  const actions: TxAction[] = [];
  const tx = new ServerNonInviteTransaction({ clock, timers: { ...DEFAULT_TIMERS }, emit: (a) => actions.push(a) }, req, dest);
  const statuses = () => actions.flatMap((a) => (a.type === 'send' && a.message.kind === 'response' ? [a.message.status] : []));
  return { tx, statuses };
}

describe('Dialog (UAS)', () => {
  it('retransmits the 2xx at T1, 2T1, … capped at T2 until the ACK arrives', () => {
    const t = setup();
    const ok = buildResponse(t.invite, 200, { toTag: 'bobtag' });
    t.dialog.await2xxAck(ok, dest);
    t.clock.advance(8_000);
    expect(t.responses.map((r) => r.at)).toEqual([500, 1500, 3500, 7500]);
    const confirmed: number[] = [];
    t.dialog.on('confirmed', () => confirmed.push(1));
    t.dialog.handleRequest(inDialog('ACK', 1), undefined);
    t.clock.advance(60_000);
    expect(t.responses).toHaveLength(4);
    expect(confirmed).toHaveLength(1);
    expect(t.dialog.state).toBe('confirmed');
  });

  it('gives up after 64*T1 without ACK and sends BYE', () => {
    const t = setup();
    t.dialog.await2xxAck(buildResponse(t.invite, 200, { toTag: 'bobtag' }), dest);
    t.clock.advance(32_000);
    expect(t.requests.map((r) => r.req.method)).toEqual(['BYE']);
    expect(t.ended).toEqual(['ack-timeout']);
    expect(t.clock.pendingCount).toBe(0);
  });

  it('answers BYE with 200 and ends; rejects an out-of-order CSeq with 500', () => {
    const t = setup();
    const old = fakeTx(inDialog('INFO', 1), t.clock);
    t.dialog.handleRequest(old.tx.request, old.tx);
    expect(old.statuses()).toEqual([500]);
    const bye = fakeTx(inDialog('BYE', 2), t.clock);
    t.dialog.handleRequest(bye.tx.request, bye.tx);
    expect(bye.statuses()).toEqual([200]);
    expect(t.ended).toEqual(['remote-bye']);
  });

  it('builds in-dialog requests with swapped tags, remote target and next CSeq', async () => {
    const t = setup();
    await t.dialog.request('INFO');
    const req = t.requests[0]!.req;
    expect(req.uri).toBe('sip:alice@127.0.0.1:5060');
    expect(header(req, 'from')).toBe('<sip:bob@127.0.0.1>;tag=bobtag');
    expect(header(req, 'to')).toBe('<sip:alice@127.0.0.1>;tag=fromtag');
    expect(header(req, 'cseq')).toBe('1 INFO');
  });
});

describe('Dialog session timers (RFC 4028)', () => {
  it('peer refreshes: without a refresh we BYE at expiry minus min(32 s, SE/3)', () => {
    const t = setup();
    t.dialog.armSessionTimer(120, false);
    t.clock.advance(87_999);
    expect(t.requests).toHaveLength(0);
    t.clock.advance(1);
    expect(t.requests.map((r) => r.req.method)).toEqual(['BYE']);
    expect(t.ended).toEqual(['session-expired']);
  });

  it('a refreshing UPDATE from the peer restarts the interval', () => {
    const t = setup();
    t.dialog.armSessionTimer(120, false);
    t.clock.advance(80_000);
    const upd = inDialog('UPDATE', 2);
    upd.headers.push({ name: 'session-expires', value: '120;refresher=uac' }, { name: 'supported', value: 'timer' });
    const f = fakeTx(upd, t.clock);
    t.dialog.handleRequest(upd, f.tx);
    expect(f.statuses()).toEqual([200]);
    t.clock.advance(80_000);
    expect(t.ended).toEqual([]);
  });

  it('we refresh at half the interval, with UPDATE when the peer allows it', async () => {
    const t = setup(['INVITE', 'UPDATE']);
    t.dialog.armSessionTimer(120, true);
    t.clock.advance(60_000);
    await Promise.resolve();
    expect(t.requests.map((r) => r.req.method)).toEqual(['UPDATE']);
    expect(header(t.requests[0]!.req, 'session-expires')).toBe('120;refresher=uac');
    await new Promise((r) => setImmediate(r));
    t.clock.advance(60_000);
    expect(t.requests.map((r) => r.req.method)).toEqual(['UPDATE', 'UPDATE']);
  });

  it('we refresh with a re-INVITE carrying our SDP when UPDATE is not allowed', async () => {
    const t = setup(['INVITE']);
    t.dialog.armSessionTimer(90, true);
    t.clock.advance(45_000);
    expect(t.requests[0]!.req.method).toBe('INVITE');
    expect(t.requests[0]!.req.body.toString()).toBe('v=0\r\n');
    t.dialog.close();
    expect(t.clock.pendingCount).toBe(0);
  });
});
