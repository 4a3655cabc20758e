import { describe, expect, it } from 'vitest';
import { header } from '../../../src/sip/message.ts';
import { responseDestination, stampReceived } from '../../../src/sip/transport-via.ts';
import { request } from './helpers.ts';

describe('Via stamping and response routing', () => {
  it('adds received and rport (RFC 3581) and answers to them over UDP', () => {
    const req = request('OPTIONS');
    stampReceived(req, { transport: 'udp', address: '10.0.0.9', port: 40000 });
    expect(header(req, 'via')).toBe('SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKabc123;rport=40000;received=10.0.0.9');
    expect(responseDestination(req, { transport: 'udp', address: '10.0.0.9', port: 40000 })).toEqual({ transport: 'udp', address: '10.0.0.9', port: 40000 });
  });

  it('without rport: received only when the host differs, reply to the sent-by port', () => {
    const req = request('OPTIONS');
    req.headers[0] = { name: 'via', value: 'SIP/2.0/UDP pc33.example.com:5066;branch=z9hG4bKx' };
    stampReceived(req, { transport: 'udp', address: '10.0.0.9', port: 40000 });
    expect(header(req, 'via')).toContain(';received=10.0.0.9');
    expect(responseDestination(req, { transport: 'udp', address: '10.0.0.9', port: 40000 })).toEqual({ transport: 'udp', address: '10.0.0.9', port: 5066 });
  });

  it('over TCP reuses the connection', () => {
    const req = request('OPTIONS');
    const src = { transport: 'tcp' as const, address: '127.0.0.1', port: 50123, connectionId: 'tcp-7' };
    stampReceived(req, src);
    expect(responseDestination(req, src)).toMatchObject({ transport: 'tcp', connectionId: 'tcp-7' });
  });
});
