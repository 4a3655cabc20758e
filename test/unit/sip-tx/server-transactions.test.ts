import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { ServerInviteTransaction, ServerNonInviteTransaction } from '../../../src/sip/transaction-server.ts';
import { DEFAULT_TIMERS, type Destination, type TxAction } from '../../../src/sip/transaction-types.ts';
import type { SipResponse } from '../../../src/sip/message.ts';
import { request, response } from './helpers.ts';

const udp: Destination = { transport: 'udp', address: '127.0.0.1', port: 5060 };
const tcp: Destination = { transport: 'tcp', address: '127.0.0.1', port: 5060, connectionId: 'c1' };

function harness() {
  const clock = new ManualClock(0);
  const actions: { at: number; a: TxAction }[] = [];
  const ctx = { clock, timers: { ...DEFAULT_TIMERS }, emit: (a: TxAction) => actions.push({ at: clock.now(), a }) };
  const sent = () => actions.flatMap((x) => (x.a.type === 'send' ? [{ at: x.at, status: (x.a.message as SipResponse).status }] : []));
  return { clock, ctx, actions, sent };
}

describe('server INVITE transaction', () => {
  it('sends 100 Trying and repeats the last provisional on retransmission', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, udp);
    tx.start();
    expect(h.sent()).toEqual([{ at: 0, status: 100 }]);
    const trying = (h.actions[0]?.a as { message: SipResponse }).message;
    expect(trying.headers.find((x) => x.name === 'to')?.value).not.toContain('tag=');
    tx.respond(response(inv, 180));
    tx.receiveRequest(inv);
    expect(h.sent().map((s) => s.status)).toEqual([100, 180, 180]);
  });

  it('Timer G retransmits a non-2xx final (500, 1000, 2000, 4000, 4000…) and Timer H gives up at 32 s', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, udp);
    tx.start();
    tx.respond(response(inv, 486));
    h.clock.advance(31_999);
    expect(h.sent().filter((s) => s.status === 486).map((s) => s.at)).toEqual([0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    h.clock.advance(1);
    expect(h.actions.slice(-2).map((x) => x.a.type)).toEqual(['timeout', 'terminated']);
    expect(h.clock.pendingCount).toBe(0);
  });

  it('ACK for a non-2xx is absorbed: Confirmed, then Timer I (T4) ends it', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, udp);
    tx.start();
    tx.respond(response(inv, 404));
    tx.receiveRequest(inv); // retransmitted INVITE gets the final again
    expect(h.sent().map((s) => s.status)).toEqual([100, 404, 404]);
    tx.receiveRequest(request('ACK', { toTag: 'totag' }));
    expect(tx.state).toBe('confirmed');
    expect(h.actions.some((x) => x.a.type === 'deliver-ack')).toBe(false);
    h.clock.advance(4_999);
    expect(tx.state).toBe('confirmed');
    h.clock.advance(1);
    expect(tx.state).toBe('terminated');
    expect(h.sent().map((s) => s.status)).toEqual([100, 404, 404]);
  });

  it('over TCP: no Timer G and Timer I is zero', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, tcp);
    tx.start();
    tx.respond(response(inv, 603));
    h.clock.advance(10_000);
    expect(h.sent().map((s) => s.status)).toEqual([100, 603]);
    tx.receiveRequest(request('ACK'));
    h.clock.advance(0);
    expect(tx.state).toBe('terminated');
  });

  it('2xx moves to Accepted: INVITE retransmissions absorbed, Timer L ends it at 64*T1', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, udp);
    tx.start();
    tx.respond(response(inv, 200));
    tx.receiveRequest(inv);
    expect(h.sent().map((s) => s.status)).toEqual([100, 200]);
    expect(tx.respond(response(inv, 200))).toBe(true); // TU-driven 2xx retransmission passes
    expect(tx.respond(response(inv, 486))).toBe(false);
    h.clock.advance(32_000);
    expect(tx.state).toBe('terminated');
    expect(h.clock.pendingCount).toBe(0);
  });

  it('can delay 100 Trying and skip it when the TU answers in time', () => {
    const h = harness();
    h.ctx.timers.trying100DelayMs = 200;
    const inv = request('INVITE');
    const tx = new ServerInviteTransaction(h.ctx, inv, udp);
    tx.start();
    h.clock.advance(100);
    tx.respond(response(inv, 180));
    h.clock.advance(500);
    expect(h.sent().map((s) => s.status)).toEqual([180]);
  });
});

describe('server non-INVITE transaction', () => {
  it('absorbs retransmissions in Trying, repeats the final in Completed, Timer J = 64*T1', () => {
    const h = harness();
    const req = request('OPTIONS');
    const tx = new ServerNonInviteTransaction(h.ctx, req, udp);
    tx.receiveRequest(req);
    expect(h.sent()).toEqual([]);
    tx.respond(response(req, 200));
    tx.receiveRequest(req);
    expect(h.sent().map((s) => s.status)).toEqual([200, 200]);
    expect(tx.respond(response(req, 500))).toBe(false);
    h.clock.advance(31_999);
    expect(tx.state).toBe('completed');
    h.clock.advance(1);
    expect(tx.state).toBe('terminated');
    expect(h.clock.pendingCount).toBe(0);
  });

  it('Timer J is zero on TCP', () => {
    const h = harness();
    const req = request('BYE');
    const tx = new ServerNonInviteTransaction(h.ctx, req, tcp);
    tx.respond(response(req, 200));
    h.clock.advance(0);
    expect(tx.state).toBe('terminated');
  });
});
