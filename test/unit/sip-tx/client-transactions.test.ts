import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { ClientInviteTransaction, ClientNonInviteTransaction } from '../../../src/sip/transaction-client.ts';
import { DEFAULT_TIMERS, type Destination, type TxAction } from '../../../src/sip/transaction-types.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import { request, response } from './helpers.ts';

const udp: Destination = { transport: 'udp', address: '127.0.0.1', port: 5070 };
const tcp: Destination = { transport: 'tcp', address: '127.0.0.1', port: 5070 };

function harness(dest = udp) {
  const clock = new ManualClock(0);
  const actions: { at: number; a: TxAction }[] = [];
  const ctx = { clock, timers: { ...DEFAULT_TIMERS }, emit: (a: TxAction) => actions.push({ at: clock.now(), a }) };
  const sends = () => actions.filter((x) => x.a.type === 'send').map((x) => x.at);
  const types = () => actions.map((x) => x.a.type);
  return { clock, ctx, actions, sends, types, dest };
}

describe('client INVITE transaction', () => {
  it('retransmits on Timer A at 0, 500, 1500, 3500 ms… and times out on Timer B at 32 s', () => {
    const h = harness();
    const tx = new ClientInviteTransaction(h.ctx, request('INVITE'), udp);
    tx.start();
    h.clock.advance(31_999);
    // Sends at 0 then after 500, 1000, 2000, 4000, 8000, 16000 (cumulative 500 … 31500).
    expect(h.sends()).toEqual([0, 500, 1500, 3500, 7500, 15500, 31500]);
    expect(tx.state).toBe('calling');
    h.clock.advance(1);
    expect(h.types().slice(-2)).toEqual(['timeout', 'terminated']);
    expect(tx.state).toBe('terminated');
    expect(h.clock.pendingCount).toBe(0);
  });

  it('does not retransmit over TCP but still times out', () => {
    const h = harness(tcp);
    const tx = new ClientInviteTransaction(h.ctx, request('INVITE'), tcp);
    tx.start();
    h.clock.advance(32_000);
    expect(h.sends()).toEqual([0]);
    expect(tx.state).toBe('terminated');
  });

  it('stops retransmitting on 1xx and delivers it', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ClientInviteTransaction(h.ctx, inv, udp);
    tx.start();
    h.clock.advance(600);
    tx.receiveResponse(response(inv, 180));
    h.clock.advance(60_000);
    expect(h.sends()).toEqual([0, 500]);
    expect(tx.state).toBe('proceeding');
    expect(h.types()).toContain('deliver-response');
  });

  it('ACKs a non-2xx final, absorbs retransmissions with the same ACK, ends after Timer D', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ClientInviteTransaction(h.ctx, inv, udp);
    tx.start();
    tx.receiveResponse(response(inv, 486));
    const ack = h.actions.find((x) => x.a.type === 'send' && x.a.message !== inv)?.a as { message: SipRequest };
    expect(ack.message.method).toBe('ACK');
    expect(ack.message.headers.find((x) => x.name === 'cseq')?.value).toBe('1 ACK');
    expect(ack.message.headers.find((x) => x.name === 'to')?.value).toContain('tag=totag');
    expect(ack.message.headers.find((x) => x.name === 'via')?.value).toContain('z9hG4bKabc123');
    tx.receiveResponse(response(inv, 486));
    expect(h.types().filter((t) => t === 'deliver-response')).toHaveLength(1);
    expect(h.sends()).toHaveLength(3); // INVITE + ACK + re-ACK
    h.clock.advance(31_999);
    expect(tx.state).toBe('completed');
    h.clock.advance(1);
    expect(tx.state).toBe('terminated');
    expect(h.clock.pendingCount).toBe(0);
  });

  it('Timer D is zero on TCP', () => {
    const h = harness(tcp);
    const inv = request('INVITE');
    const tx = new ClientInviteTransaction(h.ctx, inv, tcp);
    tx.start();
    tx.receiveResponse(response(inv, 404));
    h.clock.advance(0);
    expect(tx.state).toBe('terminated');
  });

  it('delivers 2xx and its retransmissions to the TU (RFC 6026 Accepted) until Timer M', () => {
    const h = harness();
    const inv = request('INVITE');
    const tx = new ClientInviteTransaction(h.ctx, inv, udp);
    tx.start();
    tx.receiveResponse(response(inv, 200));
    tx.receiveResponse(response(inv, 200));
    expect(h.types().filter((t) => t === 'deliver-response')).toHaveLength(2);
    expect(h.sends()).toEqual([0]); // the transaction never ACKs a 2xx
    h.clock.advance(32_000);
    expect(tx.state).toBe('terminated');
    expect(h.clock.pendingCount).toBe(0);
  });

  it('reports a transport error and terminates', () => {
    const h = harness();
    const tx = new ClientInviteTransaction(h.ctx, request('INVITE'), udp);
    tx.start();
    tx.transportError();
    expect(h.types()).toEqual(['send', 'transport-error', 'terminated']);
    expect(h.clock.pendingCount).toBe(0);
  });
});

describe('client non-INVITE transaction', () => {
  it('Timer E doubles up to T2, Timer F times out at 64*T1', () => {
    const h = harness();
    const tx = new ClientNonInviteTransaction(h.ctx, request('OPTIONS'), udp);
    tx.start();
    h.clock.advance(31_999);
    expect(h.sends()).toEqual([0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    h.clock.advance(1);
    expect(h.types().slice(-2)).toEqual(['timeout', 'terminated']);
    expect(h.clock.pendingCount).toBe(0);
  });

  it('retransmits every T2 in Proceeding', () => {
    const h = harness();
    const req = request('BYE');
    const tx = new ClientNonInviteTransaction(h.ctx, req, udp);
    tx.start();
    tx.receiveResponse(response(req, 100));
    h.clock.advance(12_000);
    expect(h.sends()).toEqual([0, 500, 4500, 8500]);
    expect(tx.state).toBe('proceeding');
  });

  it('final response → Completed, absorbs retransmissions, Timer K = T4', () => {
    const h = harness();
    const req = request('OPTIONS');
    const tx = new ClientNonInviteTransaction(h.ctx, req, udp);
    tx.start();
    tx.receiveResponse(response(req, 200));
    tx.receiveResponse(response(req, 200));
    expect(h.types().filter((t) => t === 'deliver-response')).toHaveLength(1);
    h.clock.advance(4_999);
    expect(tx.state).toBe('completed');
    h.clock.advance(1);
    expect(tx.state).toBe('terminated');
    expect(h.sends()).toEqual([0]);
  });

  it('over TCP: no Timer E and Timer K is zero', () => {
    const h = harness(tcp);
    const req = request('OPTIONS');
    const tx = new ClientNonInviteTransaction(h.ctx, req, tcp);
    tx.start();
    h.clock.advance(10_000);
    expect(h.sends()).toEqual([0]);
    tx.receiveResponse(response(req, 200));
    h.clock.advance(0);
    expect(tx.state).toBe('terminated');
  });
});
