import { describe, expect, it } from 'vitest';
import { passthroughCallerId, transferCallerId, warmCallerId } from '../../../src/call/control/caller-id.ts';
import { callerIdHeaders } from '../../../src/call/control/leg.ts';
import type { ProvisionedTrunk } from '../../../src/sip/trunk-registry.ts';

const numberTrunk = { trunkType: 'number' as const, phoneNumber: '+14155550100' };
const extensionTrunk = { trunkType: 'extension' as const, phoneNumber: '201' };

describe('caller ID of a bridged blind transfer (call_transfer)', () => {
  it("passes the customer's E.164 number through, with the trunk's number as the diverting party", () => {
    expect(transferCallerId(numberTrunk, '+442071234567')).toEqual({ kind: 'customer', number: '+442071234567', diversion: '+14155550100' });
  });

  it("falls back to the trunk's own number for an anonymous, unparsed or missing customer number", () => {
    for (const customer of ['anonymous', 'caller', '201', '', null, undefined, '+1']) {
      expect(transferCallerId(numberTrunk, customer)).toEqual({ kind: 'trunk', number: '+14155550100' });
    }
  });

  it('an extension trunk (a PBX login) presents only its own extension', () => {
    expect(transferCallerId(extensionTrunk, '+442071234567')).toEqual({ kind: 'trunk', number: '201' });
  });

  it("the customer's number equal to the trunk's is no passthrough (nothing to divert)", () => {
    expect(passthroughCallerId(numberTrunk, '+14155550100')).toBeUndefined();
  });
});

describe('caller ID of a warm transfer (caller_id_mode)', () => {
  it('outbound_number: the trunk; customer_number: passthrough; custom: the configured number', () => {
    expect(warmCallerId('outbound_number', numberTrunk, '+442071234567', null)).toEqual({ kind: 'trunk', number: '+14155550100' });
    expect(warmCallerId('customer_number', numberTrunk, '+442071234567', null)).toEqual({ kind: 'customer', number: '+442071234567', diversion: '+14155550100' });
    expect(warmCallerId('customer_number', numberTrunk, 'anonymous', null)).toEqual({ kind: 'trunk', number: '+14155550100' });
    expect(warmCallerId('custom', numberTrunk, '+442071234567', '+18005550199')).toEqual({ kind: 'custom', number: '+18005550199' });
    expect(warmCallerId('custom', numberTrunk, '+442071234567', null)).toEqual({ kind: 'trunk', number: '+14155550100' });
  });
});

describe('caller ID headers', () => {
  const trunk = (callingFormat: '+e164' | 'e164' | 'national') =>
    ({ spec: { address: 'sip.carrier.example:5060', callingFormat, countryCode: 'GB', phoneNumber: '+442070000001' } }) as unknown as ProvisionedTrunk;

  it('From and P-Asserted-Identity in the trunk\'s calling format; Diversion per RFC 5806', () => {
    expect(callerIdHeaders(trunk('national'), { kind: 'customer', number: '+442071234567', diversion: '+442070000001' })).toEqual({
      from: '<sip:02071234567@sip.carrier.example>',
      headers: [
        { name: 'p-asserted-identity', value: '<sip:02071234567@sip.carrier.example>' },
        { name: 'diversion', value: '<sip:02070000001@sip.carrier.example>;reason=unconditional;counter=1;privacy=off' },
      ],
    });
    expect(callerIdHeaders(trunk('+e164'), { kind: 'trunk', number: '+442070000001' })).toEqual({
      from: '<sip:+442070000001@sip.carrier.example>',
      headers: [{ name: 'p-asserted-identity', value: '<sip:+442070000001@sip.carrier.example>' }],
    });
  });
});
