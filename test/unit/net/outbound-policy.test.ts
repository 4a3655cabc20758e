import { describe, expect, it } from 'vitest';
import { parseAllowList, parseCidr } from '../../../src/net/outbound/cidr.ts';
import { OutboundPolicy } from '../../../src/net/outbound/policy.ts';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const policy = (list = '') => new OutboundPolicy(parseAllowList(list).cidrs);

describe('outbound allow-list', () => {
  it.each(['10.0.0.0/8', '127.0.0.1', '127.0.0.1/32', '::1', '::1/128', 'fd00::/8', '0.0.0.0/0', '::/0', ' 192.168.1.0/24 '])('accepts %j', (c) => {
    expect(parseCidr(c)).toBeDefined();
  });
  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', 'example.com', '10.0.0/8', '[::1]', 'fe80::1%eth0', '1.2.3.4/8/8', ''])('rejects %j', (c) => {
    expect(parseCidr(c)).toBeUndefined();
  });
  it('reports invalid entries of a list and ignores empty ones', () => {
    expect(parseAllowList('10.0.0.0/8, ,127.0.0.1,nope,::1/200')).toMatchObject({ invalid: ['nope', '::1/200'] });
    expect(parseAllowList('').cidrs).toEqual([]);
  });

  it('SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: empty by default, parsed, and a bad entry stops start-up naming the variable', () => {
    expect(loadConfig({}).outbound.allowCidrs).toEqual([]);
    expect(loadConfig({ SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8, 127.0.0.1/32,::1' }).outbound.allowCidrs).toEqual(['10.0.0.0/8', '127.0.0.1/32', '::1']);
    expect(() => loadConfig({ SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8,intranet' })).toThrow(ConfigError);
    expect(() => loadConfig({ SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8,intranet' })).toThrow(/SWITCHBOARD_OUTBOUND_ALLOW_CIDRS.*intranet/);
  });
});

describe('outbound policy', () => {
  it('refuses internal addresses by default and lets public ones through', () => {
    const p = policy();
    expect(p.refusal('127.0.0.1')).toBe('loopback');
    expect(p.refusal('169.254.169.254')).toBe('link-local');
    expect(p.refusal('::ffff:10.0.0.1')).toBe('private');
    expect(p.refusal('fd00::1')).toBe('unique-local');
    expect(p.refusal('93.184.216.34')).toBeUndefined();
    expect(p.refusal('2606:4700::1')).toBeUndefined();
    expect(p.refusal('not-an-ip')).toBe('reserved');
  });

  it('the allow-list opens exactly its ranges, IPv4-mapped and NAT64 forms included', () => {
    const p = policy('10.0.0.0/8,127.0.0.1/32,fd00:1::/32');
    expect(p.refusal('10.20.30.40')).toBeUndefined();
    expect(p.refusal('::ffff:10.20.30.40')).toBeUndefined();
    expect(p.refusal('64:ff9b::a14:1e28')).toBeUndefined();
    expect(p.refusal('127.0.0.1')).toBeUndefined();
    expect(p.refusal('127.0.0.2')).toBe('loopback');
    expect(p.refusal('::1')).toBe('loopback');
    expect(p.refusal('fd00:1::5')).toBeUndefined();
    expect(p.refusal('fd00:2::5')).toBe('unique-local');
    expect(p.refusal('192.168.0.1')).toBe('private');
    expect(p.refusal('169.254.169.254')).toBe('link-local');
  });

  it('0.0.0.0/0 and ::/0 open everything', () => {
    const p = policy('0.0.0.0/0,::/0');
    for (const a of ['127.0.0.1', '169.254.169.254', '::1', 'fe80::1', '::ffff:10.0.0.1']) expect(p.refusal(a)).toBeUndefined();
  });

  it('checks literal hosts and localhost at validation, and leaves other names to connect time', () => {
    const p = policy();
    expect(p.hostRefusal('169.254.169.254')).toEqual({ host: '169.254.169.254', address: '169.254.169.254', kind: 'link-local' });
    expect(p.hostRefusal('[::1]')).toMatchObject({ address: '::1', kind: 'loopback' });
    expect(p.hostRefusal('LocalHost')).toMatchObject({ host: 'localhost', kind: 'loopback' });
    expect(p.hostRefusal('localhost.')).toMatchObject({ kind: 'loopback' });
    expect(p.hostRefusal('api.localhost')).toMatchObject({ kind: 'loopback' });
    expect(p.hostRefusal('localhost.example.com')).toBeUndefined();
    expect(p.hostRefusal('hooks.example.com')).toBeUndefined();
    expect(p.hostRefusal('8.8.8.8')).toBeUndefined();
    expect(policy('127.0.0.0/8').hostRefusal('localhost')).toBeUndefined();
    expect(policy('::1').hostRefusal('localhost')).toBeUndefined();
  });

  it('says why a URL is refused, reading hosts as the URL parser does', () => {
    const p = policy();
    expect(p.urlProblem('webhook url', 'http://169.254.169.254/latest/meta-data/')).toBe(
      'The webhook url field must point to a public address: 169.254.169.254 is a link-local address.',
    );
    // Shorthand and hex forms of 127.0.0.1 are what the URL parser makes of them.
    expect(p.urlProblem('endpoint', 'http://2130706433/x')).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(p.urlProblem('endpoint', 'http://0x7f.1/x')).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(p.urlProblem('endpoint', 'https://[::ffff:a9fe:a9fe]/x')).toMatch(/link-local/);
    expect(p.urlProblem('endpoint', 'https://user:pw@localhost:8443/x?token=abc')).toBe(
      'The endpoint field must point to a public address: localhost resolves to 127.0.0.1, a loopback address.',
    );
    expect(p.urlProblem('endpoint', 'https://hooks.example.com/x')).toBeUndefined();
    expect(p.urlProblem('endpoint', 'not a url')).toBeUndefined();
  });
});
