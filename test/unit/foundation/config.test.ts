import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

describe('configuration', () => {
  it('applies the defaults of interface.md', () => {
    const c = loadConfig({ SIP_PUBLIC_HOST: '198.51.100.7' });
    expect(c.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(c.sip).toEqual({ host: '0.0.0.0', port: 5060, publicHost: '198.51.100.7' });
    expect(c.rtp).toEqual({ portMin: 20000, portMax: 29999 });
    expect(c.logLevel).toBe('info');
    expect(c.publicUrl).toBe('http://127.0.0.1:8080');
    expect(c.dataDir.endsWith('data')).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    ['HTTP_PORT', 'eighty'],
    ['HTTP_PORT', '70000'],
    ['SIP_PORT', '0'],
    ['RTP_PORT_MIN', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['OPENAI_BASE_URL', 'not a url'],
    ['TWILIO_BASE_URL', 'ftp://example.com'],
    ['SWITCHBOARD_PUBLIC_URL', 'nope'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('rejects an empty or inverted RTP range', () => {
    expect(() => loadConfig({ RTP_PORT_MIN: '30000', RTP_PORT_MAX: '20000' })).toThrow('RTP_PORT_MAX');
    expect(() => loadConfig({ RTP_PORT_MIN: '20000', RTP_PORT_MAX: '20001' })).toThrow('RTP_PORT_MIN');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ HTTP_PORT: '' }).http.port).toBe(8080);
  });
});
