import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import type { SipMessage, SipRequest, SipResponse } from '../../../src/sip/message.ts';
import { TransactionLayer, type ServerTransaction } from '../../../src/sip/transaction-layer.ts';
import { buildResponse } from '../../../src/sip/transaction-response.ts';
import { ServerInviteTransaction } from '../../../src/sip/transaction-server.ts';
import type { Destination, Source } from '../../../src/sip/transaction-types.ts';
import { stampReceived } from '../../../src/sip/transport-via.ts';
import { request, response } from './helpers.ts';

const source: Source = { transport: 'udp', address: '127.0.0.1', port: 5060 };

function setup() {
  const clock = new ManualClock(0);
  const sent: { msg: SipMessage; dest: Destination }[] = [];
  const seen: { req: SipRequest; tx: ServerTransaction | undefined }[] = [];
  const stray: SipResponse[] = [];
  const layer = new TransactionLayer({
    clock,
    send: (msg, dest) => void sent.push({ msg, dest }),
    tu: { onRequest: (req, tx) => seen.push({ req, tx }), onStrayResponse: (res) => stray.push(res) },
  });
  const incoming = (req: SipRequest) => {
    const copy = structuredClone(req);
    stampReceived(copy, source);
    layer.receiveRequest(copy, source);
  };
  const statuses = () => sent.flatMap((s) => (s.msg.kind === 'response' ? [s.msg.status] : []));
  return { clock, layer, sent, seen, stray, incoming, statuses };
}

describe('TransactionLayer', () => {
  it('absorbs a retransmitted request and repeats the last response', () => {
    const t = setup();
    const req = request('OPTIONS');
    t.incoming(req);
    t.incoming(req);
    expect(t.seen).toHaveLength(1);
    t.seen[0]!.tx!.respond(buildResponse(t.seen[0]!.req, 200));
    t.incoming(req);
    expect(t.statuses()).toEqual([200, 200]);
    expect(t.layer.size).toBe(1);
    t.clock.advance(32_000);
    expect(t.layer.size).toBe(0);
    expect(t.layer.timerCount).toBe(0);
  });

  it('matches by branch, sent-by and method: a different method is a new transaction', () => {
    const t = setup();
    t.incoming(request('OPTIONS'));
    t.incoming(request('INFO', { branch: 'z9hG4bKabc123' }));
    expect(t.seen).toHaveLength(2);
  });

  it('CANCEL forms its own transaction, finds the INVITE, and the INVITE ends 487 + absorbed ACK', () => {
    const t = setup();
    const invite = request('INVITE');
    t.incoming(invite);
    const inviteTx = t.seen[0]!.tx as ServerInviteTransaction;
    expect(t.statuses()).toEqual([100]);
    const cancel = request('CANCEL');
    t.incoming(cancel);
    expect(t.seen).toHaveLength(2);
    const cancelTx = t.seen[1]!.tx!;
    expect(cancelTx).not.toBe(inviteTx);
    expect(t.layer.findInviteForCancel(t.seen[1]!.req)).toBe(inviteTx);
    cancelTx.respond(buildResponse(t.seen[1]!.req, 200));
    inviteTx.respond(buildResponse(inviteTx.request, 487, { toTag: 'x' }));
    expect(t.statuses()).toEqual([100, 200, 487]);
    t.incoming(request('ACK', { toTag: 'x', cseqMethod: 'ACK' }));
    expect(t.seen).toHaveLength(2); // the ACK for the 487 never reaches the TU
    expect(inviteTx.state).toBe('confirmed');
    t.clock.advance(64 * 500);
    expect(t.layer.size).toBe(0);
  });

  it('an ACK for a 2xx (new branch) goes to the TU without a transaction', () => {
    const t = setup();
    t.incoming(request('ACK', { branch: 'z9hG4bKack2xx', toTag: 'x' }));
    expect(t.seen).toHaveLength(1);
    expect(t.seen[0]!.tx).toBeUndefined();
    expect(t.layer.size).toBe(0);
  });

  it('routes responses to the client transaction by branch + CSeq method; others are stray', () => {
    const t = setup();
    const got: number[] = [];
    const req = request('INVITE', { branch: 'z9hG4bKclient1' });
    t.layer.sendRequest(req, { transport: 'udp', address: '127.0.0.1', port: 5070 }, { onResponse: (r) => got.push(r.status) });
    t.layer.receiveResponse(response(req, 180), source);
    t.layer.receiveResponse(response(request('INVITE', { branch: 'z9hG4bKother' }), 200), source);
    expect(got).toEqual([180]);
    expect(t.stray).toHaveLength(1);
    t.layer.receiveResponse(response(req, 486), source);
    expect(got).toEqual([180, 486]);
    expect(t.sent.map((s) => (s.msg.kind === 'request' ? s.msg.method : s.msg.status))).toEqual(['INVITE', 'ACK']);
  });

  it('a failed send becomes a transport error for the transaction', async () => {
    const clock = new ManualClock(0);
    const errors: string[] = [];
    const layer = new TransactionLayer({ clock, send: () => Promise.reject(new Error('ECONNREFUSED')), tu: { onRequest: () => undefined } });
    layer.sendRequest(request('OPTIONS'), { transport: 'tcp', address: '127.0.0.1', port: 1 }, {
      onResponse: () => undefined,
      onTransportError: () => errors.push('transport'),
    });
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual(['transport']);
    expect(layer.size).toBe(0);
  });

  it('close() terminates everything and cancels every timer', () => {
    const t = setup();
    t.layer.sendRequest(request('INVITE', { branch: 'z9hG4bKc1' }), { transport: 'udp', address: '127.0.0.1', port: 5070 }, { onResponse: () => undefined });
    t.incoming(request('INVITE', { branch: 'z9hG4bKs1' }));
    expect(t.layer.size).toBe(2);
    t.layer.close();
    t.layer.close();
    expect(t.layer.size).toBe(0);
    expect(t.clock.pendingCount).toBe(0);
  });
});
