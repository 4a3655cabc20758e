import { describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { checkRequest } from '../../../src/sip/validate.ts';
import { torture } from './torture-fixtures.ts';

function request(name: string): SipRequest {
  const r = parseMessage(torture(name));
  if (!r.ok || r.message.kind !== 'request') throw new Error(`${name} did not parse as a request`);
  return r.message;
}

describe('checkRequest on the RFC 4475 application-layer messages', () => {
  it('unkscm and novelsc: 416 for a Request-URI scheme not served', () => {
    expect(checkRequest(request('unkscm'))).toMatchObject({ ok: false, status: 416 });
    expect(checkRequest(request('novelsc'))).toMatchObject({ ok: false, status: 416 });
    expect(checkRequest(request('unkscm'), { role: 'proxy' })).toMatchObject({ status: 416 });
  });

  it('unksm2: a registrar answers 400 to a non-SIP AOR; a proxy passes it', () => {
    expect(checkRequest(request('unksm2'))).toMatchObject({ ok: false, status: 400 });
    expect(checkRequest(request('unksm2'), { role: 'proxy' })).toEqual({ ok: true });
  });

  it('bext01: 420 listing the Require tags (UAS) or Proxy-Require tags (proxy)', () => {
    expect(checkRequest(request('bext01'))).toMatchObject({
      status: 420,
      unsupported: ['nothingSupportsThis', 'nothingSupportsThisEither'],
    });
    expect(checkRequest(request('bext01'), { role: 'proxy' })).toMatchObject({
      status: 420,
      unsupported: ['noProxiesSupportThis', 'norDoAnyProxiesSupportThis'],
    });
    expect(
      checkRequest(request('bext01'), { extensions: ['nothingsupportsthis', 'NothingSupportsThisEither'] }),
    ).toEqual({ ok: true });
  });

  it('invut: 415 with Accept for an unknown body type; a proxy passes it', () => {
    expect(checkRequest(request('invut'))).toMatchObject({ status: 415, accept: ['application/sdp'] });
    expect(checkRequest(request('invut'), { role: 'proxy' })).toEqual({ ok: true });
  });

  it('sdp01: 406 when Accept excludes every type the UAS answers with', () => {
    expect(checkRequest(request('sdp01'))).toMatchObject({ status: 406 });
    expect(checkRequest(request('sdp01'), { answerTypes: ['text/nobodyknowsthis'] })).toEqual({ ok: true });
  });

  it('zeromf: a proxy answers 483; an endpoint processes it', () => {
    expect(checkRequest(request('zeromf'), { role: 'proxy' })).toMatchObject({ status: 483 });
    expect(checkRequest(request('zeromf'))).toEqual({ ok: true });
  });

  it('intmeth and esc02: 501 with Allow for an unknown method', () => {
    expect(checkRequest(request('intmeth'))).toMatchObject({ status: 501 });
    const esc02 = checkRequest(request('esc02'));
    expect(esc02).toMatchObject({ status: 501 });
    expect(esc02.ok === false && esc02.allow).toContain('REGISTER');
  });

  it('accepts the ordinary ones', () => {
    for (const name of ['regaut01', 'cparam01', 'cparam02', 'regescrt', 'badbranch', 'lwsdisp', 'inv2543', 'wsinv', 'esc01']) {
      expect(checkRequest(request(name)), name).toEqual({ ok: true });
    }
  });

  it('505 for a version other than SIP/2.0 on a message built in code', () => {
    const m = { ...request('zeromf'), version: 'SIP/3.0' };
    expect(checkRequest(m)).toMatchObject({ status: 505 });
  });

  it('never answers ACK', () => {
    const m = { ...request('unkscm'), method: 'ACK' };
    expect(checkRequest(m)).toEqual({ ok: true });
  });

  it('Accept with q=0 excludes a type; wildcards include it', () => {
    const base = request('sdp01');
    const withAccept = (v: string): SipRequest => ({
      ...base,
      headers: [...base.headers.filter((h) => h.name !== 'accept'), { name: 'accept', value: v }],
    });
    expect(checkRequest(withAccept('application/*'))).toEqual({ ok: true });
    expect(checkRequest(withAccept('*/*'))).toEqual({ ok: true });
    expect(checkRequest(withAccept('application/sdp;q=0'))).toMatchObject({ status: 406 });
  });
});
