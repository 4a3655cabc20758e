import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { ConfigError, defaultNodeId, loadConfig, parseHostPort } from '../../../src/config.ts';

describe('configuration', () => {
  it('applies the documented defaults (docs/CONFIGURATION.md)', () => {
    const c = loadConfig({ SIP_PUBLIC_HOST: '198.51.100.7' });
    expect(c.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(c.sip).toMatchObject({ host: '0.0.0.0', port: 5060, publicHost: '198.51.100.7' });
    expect(c.rtp).toEqual({ portMin: 20000, portMax: 29999, thread: true, native: true });
    expect(c.logLevel).toBe('info');
    expect(c.publicUrl).toBe('http://127.0.0.1:8080');
    expect(c.dataDir.endsWith('data')).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
    expect(c.calls).toEqual({
      maxLiveCalls: 500,
      maxPerAccount: 200,
      maxPerTrunk: 200,
      maxLoopDelayMs: 50,
      ratePerTrunk: { perSec: 10, burst: 20 },
      rate: { perSec: 0, burst: 1 },
    });
  });

  it('SIP_PUBLIC_HOST6: what IPv6 peers are told; by default the IPv6 address SIP_HOST names, none for :: or an IPv4 host', () => {
    expect(loadConfig({ SIP_PUBLIC_HOST: '198.51.100.7' }).sip.publicHost6).toBeUndefined();
    expect(loadConfig({ SIP_HOST: '::', SIP_PUBLIC_HOST: '198.51.100.7' }).sip.publicHost6).toBeUndefined();
    expect(loadConfig({ SIP_HOST: '2001:db8::7', SIP_PUBLIC_HOST: '198.51.100.7' }).sip.publicHost6).toBe('2001:db8::7');
    expect(loadConfig({ SIP_HOST: '2001:db8::7', SIP_PUBLIC_HOST: '2001:db8::8' }).sip.publicHost6).toBeUndefined();
    expect(loadConfig({ SIP_HOST: '::', SIP_PUBLIC_HOST: '198.51.100.7', SIP_PUBLIC_HOST6: '2001:db8::9' }).sip).toMatchObject({ host: '::', publicHost: '198.51.100.7', publicHost6: '2001:db8::9' });
    for (const bad of ['198.51.100.7', 'pbx.example.com', '::ffff:198.51.100.7']) {
      expect(() => loadConfig({ SIP_PUBLIC_HOST6: bad })).toThrow(/SIP_PUBLIC_HOST6: must be an IPv6 address/);
    }
  });

  it('RTP_PUBLIC_HOST: the media address for SDP, unset by default (SIP_PUBLIC_HOST is used); a bad value is refused', () => {
    expect(loadConfig({ SIP_PUBLIC_HOST: '198.51.100.7' }).rtp.publicHost).toBeUndefined();
    expect(loadConfig({ SIP_PUBLIC_HOST: '198.51.100.7', RTP_PUBLIC_HOST: '198.51.100.8' }).rtp.publicHost).toBe('198.51.100.8');
    expect(() => loadConfig({ RTP_PUBLIC_HOST: 'not a host!' })).toThrow(/RTP_PUBLIC_HOST/);
  });

  it('SIP_TRUSTED_PROXIES: none by default; addresses and CIDR ranges; a bad entry is refused by name', () => {
    expect(loadConfig({}).sip.trustedProxies).toBe('');
    expect(loadConfig({ SIP_TRUSTED_PROXIES: '10.0.0.0/24,192.0.2.7' }).sip.trustedProxies).toBe('10.0.0.0/24,192.0.2.7');
    expect(() => loadConfig({ SIP_TRUSTED_PROXIES: '10.0.0.0/24,kamailio' })).toThrow(/SIP_TRUSTED_PROXIES: .*kamailio/);
  });

  it('SWITCHBOARD_NODE_ID: the host name by default; a name of up to 64 host-name characters; anything else refused by name', () => {
    expect(loadConfig({}).nodeId).toBe(defaultNodeId(os.hostname()));
    expect(loadConfig({ SWITCHBOARD_NODE_ID: 'edge-node_2.eu' }).nodeId).toBe('edge-node_2.eu');
    for (const bad of ['node a', 'node/a', '-leading', 'x'.repeat(65), 'nœud']) {
      expect(() => loadConfig({ SWITCHBOARD_NODE_ID: bad }), bad).toThrow(/SWITCHBOARD_NODE_ID/);
    }
    // A host name with characters a node id does not take still gives a valid id.
    expect(defaultNodeId('my host (1)')).toBe('my-host--1-');
    expect(defaultNodeId('..')).toBe('switchboard');
    expect(loadConfig({ SWITCHBOARD_NODE_ID: defaultNodeId('--weird host--') }).nodeId).toBe('weird-host--');
  });

  it('SIP_OUTBOUND_PROXY: unset by default; host:port, a bare host on 5060, [v6]:port; anything else refused by name', () => {
    expect(loadConfig({}).sip.outboundProxy).toBeUndefined();
    expect(loadConfig({ SIP_OUTBOUND_PROXY: '10.0.10.5:5070' }).sip.outboundProxy).toEqual({ host: '10.0.10.5', port: 5070 });
    expect(loadConfig({ SIP_OUTBOUND_PROXY: 'edge.internal' }).sip.outboundProxy).toEqual({ host: 'edge.internal', port: 5060 });
    expect(loadConfig({ SIP_OUTBOUND_PROXY: '[2001:db8::5]:5080' }).sip.outboundProxy).toEqual({ host: '2001:db8::5', port: 5080 });
    for (const bad of ['sip:10.0.10.5', '10.0.10.5:0', '10.0.10.5:70000', '2001:db8::5', 'edge.internal:50x', 'a b:5060', '[edge]:5060']) {
      expect(() => loadConfig({ SIP_OUTBOUND_PROXY: bad }), bad).toThrow(/SIP_OUTBOUND_PROXY/);
    }
    expect(parseHostPort('127.0.0.2:15060')).toEqual({ host: '127.0.0.2', port: 15060 });
  });

  it('takes the call caps and the overload threshold from SWITCHBOARD_MAX_*', () => {
    const c = loadConfig({
      SWITCHBOARD_MAX_CALLS: '900',
      SWITCHBOARD_MAX_CALLS_PER_ACCOUNT: '40',
      SWITCHBOARD_MAX_CALLS_PER_TRUNK: '30',
      SWITCHBOARD_MAX_LOOP_DELAY_MS: '0',
    });
    expect(c.calls).toMatchObject({ maxLiveCalls: 900, maxPerAccount: 40, maxPerTrunk: 30, maxLoopDelayMs: 0 });
  });

  it('takes the new-call rates from SWITCHBOARD_MAX_CALL_RATE*; an unset burst is two seconds of the rate', () => {
    const c = loadConfig({ SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: '2.5', SWITCHBOARD_MAX_CALL_RATE: '40', SWITCHBOARD_MAX_CALL_BURST: '50' });
    expect(c.calls.ratePerTrunk).toEqual({ perSec: 2.5, burst: 5 });
    expect(c.calls.rate).toEqual({ perSec: 40, burst: 50 });
    expect(loadConfig({ SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: '0' }).calls.ratePerTrunk).toEqual({ perSec: 0, burst: 1 });
    expect(loadConfig({ SWITCHBOARD_MAX_CALL_BURST_PER_TRUNK: '3' }).calls.ratePerTrunk).toEqual({ perSec: 10, burst: 3 });
  });

  it('sets V8’s heap growing factor from SWITCHBOARD_HEAP_GROWING_PERCENT (200 by default, 0: V8’s own)', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(200);
    expect(loadConfig({ SWITCHBOARD_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ SWITCHBOARD_HEAP_GROWING_PERCENT: '150' }).heapGrowingPercent).toBe(150);
  });

  it('runs RTP in its own thread unless SWITCHBOARD_RTP_THREAD=0', () => {
    expect(loadConfig({}).rtp.thread).toBe(true);
    expect(loadConfig({ SWITCHBOARD_RTP_THREAD: '0' }).rtp.thread).toBe(false);
    expect(loadConfig({ SWITCHBOARD_RTP_THREAD: '1' }).rtp.thread).toBe(true);
  });

  it('gives the RTP thread native sockets unless SWITCHBOARD_RTP_NATIVE=0', () => {
    expect(loadConfig({}).rtp.native).toBe(true);
    expect(loadConfig({ SWITCHBOARD_RTP_NATIVE: '0' }).rtp.native).toBe(false);
  });

  it('paces a busy engine\'s denoiser batches at SWITCHBOARD_DENOISER_BUSY_BATCH_MS (40 by default)', () => {
    expect(loadConfig({}).denoiserBusyBatchMs).toBe(40);
    expect(loadConfig({ SWITCHBOARD_DENOISER_BUSY_BATCH_MS: '20' }).denoiserBusyBatchMs).toBe(20);
  });

  it('runs the C DSP kernels unless SWITCHBOARD_DSP_NATIVE=0', () => {
    expect(loadConfig({}).dspNative).toBe(true);
    expect(loadConfig({ SWITCHBOARD_DSP_NATIVE: '0' }).dspNative).toBe(false);
  });

  it.each([
    ['SWITCHBOARD_RTP_THREAD', 'yes'],
    ['SWITCHBOARD_RTP_NATIVE', 'on'],
    ['SWITCHBOARD_DSP_NATIVE', 'true'],
    ['SWITCHBOARD_DENOISER_BUSY_BATCH_MS', 'soon'],
    ['SWITCHBOARD_DENOISER_BUSY_BATCH_MS', '500'],
    ['HTTP_PORT', 'eighty'],
    ['HTTP_PORT', '70000'],
    ['SIP_PORT', '0'],
    ['RTP_PORT_MIN', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['OPENAI_BASE_URL', 'not a url'],
    ['TWILIO_BASE_URL', 'ftp://example.com'],
    ['SWITCHBOARD_PUBLIC_URL', 'nope'],
    ['HTTP_HOST', 'http://0.0.0.0'],
    ['SIP_HOST', '10.0.0.1:5060'],
    ['SIP_PUBLIC_HOST', 'my host'],
    ['DEEPGRAM_BASE_URL', 'nope'],
    ['RTP_PORT_MAX', '65536'],
    ['SIP_PORT', '5060.5'],
    ['SWITCHBOARD_MAX_CALLS', '0'],
    ['SWITCHBOARD_MAX_CALLS_PER_TRUNK', 'many'],
    ['SWITCHBOARD_MAX_LOOP_DELAY_MS', '-5'],
    ['SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK', '-1'],
    ['SWITCHBOARD_MAX_CALL_BURST_PER_TRUNK', '0'],
    ['SWITCHBOARD_MAX_CALL_RATE', 'fast'],
    ['SWITCHBOARD_HEAP_GROWING_PERCENT', '-1'],
    ['SWITCHBOARD_HEAP_GROWING_PERCENT', '5000'],
    ['SIP_TCP_MAX_CONNECTIONS', '0'],
    ['SIP_TCP_MAX_PER_SOURCE', 'lots'],
    ['SIP_TCP_ACCEPT_RATE', '0'],
    ['SIP_TCP_MESSAGE_TIMEOUT_MS', '10'],
    ['SIP_TCP_IDLE_TIMEOUT_MS', '-1'],
    ['SIP_TCP_FD_RESERVE', '-1'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('rejects an empty or inverted RTP range', () => {
    expect(() => loadConfig({ RTP_PORT_MIN: '30000', RTP_PORT_MAX: '20000' })).toThrow('RTP_PORT_MAX');
    expect(() => loadConfig({ RTP_PORT_MIN: '20000', RTP_PORT_MAX: '20001' })).toThrow('RTP_PORT_MIN');
  });

  it('accepts IPv4, IPv6 and host names for the host variables', () => {
    const c = loadConfig({ HTTP_HOST: '::1', SIP_HOST: '127.0.0.1', SIP_PUBLIC_HOST: 'sip.example.com' });
    expect([c.http.host, c.sip.host, c.sip.publicHost]).toEqual(['::1', '127.0.0.1', 'sip.example.com']);
  });

  it('bounds SIP over TCP by default; the cap and reserve are derived at start-up unless set', () => {
    expect(loadConfig({}).sip.tcp).toEqual({
      maxConnections: undefined,
      maxPerSource: 64,
      acceptRatePerSecond: 10,
      idleTimeoutMs: 300_000,
      messageTimeoutMs: 10_000,
      fdReserve: undefined,
    });
    const c = loadConfig({ SIP_TCP_MAX_CONNECTIONS: '2000', SIP_TCP_FD_RESERVE: '4096', SIP_TCP_ACCEPT_RATE: '2.5', SIP_TCP_MESSAGE_TIMEOUT_MS: '5000' });
    expect(c.sip.tcp).toMatchObject({ maxConnections: 2000, fdReserve: 4096, acceptRatePerSecond: 2.5, messageTimeoutMs: 5000 });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ HTTP_PORT: '' }).http.port).toBe(8080);
  });

  it('cluster: alone in memory by default, node id the host name; SWITCHBOARD_REDIS_URL must be redis(s)://, and a bad one is refused without echoing it', () => {
    const alone = loadConfig({}).cluster!;
    expect(alone.redisUrl).toBeUndefined();
    expect(alone.nodeId).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(alone.leaseMs).toBe(10_000);
    const shared = loadConfig({ SWITCHBOARD_REDIS_URL: 'redis://:pw@10.0.0.5:6379/2', SWITCHBOARD_NODE_ID: 'engine-3', SWITCHBOARD_NODE_LEASE_SECONDS: '5' }).cluster;
    expect(shared).toEqual({ nodeId: 'engine-3', redisUrl: 'redis://:pw@10.0.0.5:6379/2', leaseMs: 5000, leaseTtlMs: 30_000 });
    expect(loadConfig({ SWITCHBOARD_REDIS_URL: 'rediss://cache.example.com:6380' }).cluster!.redisUrl).toBe('rediss://cache.example.com:6380');
    let message = '';
    try {
      loadConfig({ SWITCHBOARD_REDIS_URL: 'http://:secretpw@10.0.0.5:6379' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/SWITCHBOARD_REDIS_URL/);
    expect(message).not.toContain('secretpw');
    expect(() => loadConfig({ SWITCHBOARD_NODE_ID: 'a b' })).toThrow(/SWITCHBOARD_NODE_ID/);
    expect(() => loadConfig({ SWITCHBOARD_NODE_LEASE_SECONDS: '1' })).toThrow(/SWITCHBOARD_NODE_LEASE_SECONDS/);
  });
});
