import { describe, expect, it } from 'vitest';
import { admit, diagnosticMode, routeInvite, type AdmissionFacts } from '../../../src/call/inbound-router.ts';
import type { ProvisionedTrunk, TrunkSpec } from '../../../src/sip/trunk-registry.ts';

function trunk(id: string, over: Partial<TrunkSpec> = {}): ProvisionedTrunk {
  return {
    inboundTrunkId: id,
    outboundTrunkId: `out-${id}`,
    spec: {
      id: 1,
      accountId: 1,
      trunkType: 'number',
      phoneNumber: '+14155550100',
      username: 'u',
      password: 'p',
      address: 'sip.example.com',
      callingFormat: '+e164',
      authType: 'ip',
      allowedIps: ['10.0.0.1'],
      outboundProxy: false,
      countryCode: 'US',
      ...over,
    },
  };
}

const ipTrunk = trunk('ip1');
const authTrunk = trunk('auth1', { authType: 'auth', allowedIps: null, phoneNumber: '+442071838750', callingFormat: 'national', countryCode: 'GB' });
const ext = trunk('ext1', { trunkType: 'extension', phoneNumber: '100' });
const trunks = [ipTrunk, authTrunk, ext];

const route = (requestUser: string | undefined, trusting: string[], toUser?: string) =>
  routeInvite({ sourceIp: '10.0.0.1', requestUser, toUser }, { trunks, trusting: new Set(trusting) });

describe('routeInvite', () => {
  it.each([
    ['trusted source, its number', '+14155550100', ['ip1'], { kind: 'accept', trunk: ipTrunk }],
    ['number without +', '14155550100', ['ip1'], { kind: 'accept', trunk: ipTrunk }],
    ['untrusted source, ip trunk number', '+14155550100', [], { kind: 'reject', status: 403, strike: true }],
    ['untrusted source, unknown number (no enumeration)', '+19999999999', [], { kind: 'reject', status: 403 }],
    ['trusted source, unknown number', '+19999999999', ['ip1'], { kind: 'reject', status: 404, strike: false }],
    ['auth trunk number from elsewhere → digest', '02071838750', [], { kind: 'authenticate', trunk: authTrunk }],
    ['auth trunk number from its registrar', '+442071838750', ['auth1'], { kind: 'accept', trunk: authTrunk }],
    ['call on the registration (trunk id in R-URI)', 'auth1', ['auth1'], { kind: 'accept', trunk: authTrunk }],
    ['registration id from a stranger → digest', 'auth1', [], { kind: 'authenticate', trunk: authTrunk }],
    ['extension matches exactly', '100', ['ip1', 'ext1'], { kind: 'accept', trunk: ext }],
    ['echo for a trusted source', 'echo', ['ip1'], { kind: 'accept', trunk: ipTrunk, diagnostic: 'echo' }],
    ['*44 tone', '*44', ['ip1'], { kind: 'accept', diagnostic: 'tone' }],
    ['echo for a stranger', 'echo', [], { kind: 'reject', status: 403 }],
  ] as const)('%s', (_name, user, trusting, expected) => {
    expect(route(user, [...trusting])).toMatchObject(expected);
  });

  it('falls back to the To user when the Request-URI names no trunk number', () => {
    expect(route('switchboard', ['ip1'], '+14155550100')).toMatchObject({ kind: 'accept', trunk: ipTrunk });
  });

  it('a trunk that requires TLS takes its calls only over TLS, trusted source or not', () => {
    const secure = trunk('tls1', { transport: 'tls' });
    const view = { trunks: [secure], trusting: new Set(['tls1']) };
    const facts = { sourceIp: '10.0.0.1', requestUser: '+14155550100', toUser: undefined };
    expect(routeInvite({ ...facts, transport: 'udp' }, view)).toMatchObject({ kind: 'reject', status: 403, reason: 'TLS Required', strike: false });
    expect(routeInvite({ ...facts, transport: 'tcp' }, view)).toMatchObject({ kind: 'reject', status: 403 });
    expect(routeInvite(facts, view)).toMatchObject({ kind: 'reject', status: 403 });
    expect(routeInvite({ ...facts, transport: 'tls' }, view)).toMatchObject({ kind: 'accept', trunk: secure });
  });

  it('a diagnostics To on a registration call', () => {
    expect(route('auth1', ['auth1'], '*43')).toMatchObject({ kind: 'accept', trunk: authTrunk, diagnostic: 'echo' });
  });

  it('prefers the trunk that trusts the source when two accounts share a number', () => {
    const other = trunk('ip2', { accountId: 2, allowedIps: ['10.0.0.9'] });
    const d = routeInvite({ sourceIp: '10.0.0.9', requestUser: '+14155550100', toUser: undefined }, { trunks: [ipTrunk, other], trusting: new Set(['ip2']) });
    expect(d).toMatchObject({ kind: 'accept', trunk: other });
  });

  it('knows its diagnostics names', () => {
    expect([diagnosticMode('ECHO'), diagnosticMode('*43'), diagnosticMode('*44'), diagnosticMode('100')]).toEqual(['echo', 'echo', 'tone', undefined]);
  });
});

describe('admit', () => {
  const ok: AdmissionFacts = {
    diagnostic: false,
    phoneNumberId: 1,
    assistantId: 2,
    balanceMicros: 1_000_000,
    minBalanceMicros: 100_000,
    activeForAccount: 0,
    activeForTrunk: 0,
    maxPerAccount: 2,
    maxPerTrunk: 1,
  };
  it.each([
    ['all good', {}, { ok: true }],
    ['no number record', { phoneNumberId: undefined }, { ok: false, status: 404 }],
    ['no inbound assistant', { assistantId: undefined }, { ok: false, status: 480, cause: 'no-inbound-assistant' }],
    ['account at its cap', { activeForAccount: 2 }, { ok: false, status: 486, cause: 'account-call-limit' }],
    ['trunk at its cap', { activeForTrunk: 1 }, { ok: false, status: 486, cause: 'trunk-call-limit' }],
    ['balance below a minute', { balanceMicros: 99_999 }, { ok: false, status: 402, cause: 'insufficient-balance' }],
    ['diagnostics need no assistant or money', { diagnostic: true, assistantId: undefined, phoneNumberId: undefined, balanceMicros: 0 }, { ok: true }],
    ['diagnostics still count against caps', { diagnostic: true, activeForTrunk: 1 }, { ok: false, status: 486 }],
  ] as const)('%s', (_name, over, expected) => {
    expect(admit({ ...ok, ...over })).toMatchObject(expected);
  });

  it('says why in a Reason header', () => {
    const r = admit({ ...ok, balanceMicros: 0 });
    expect(r.ok === false && r.reasonHeader).toBe('SIP;cause=402;text="Insufficient balance"');
  });
});
