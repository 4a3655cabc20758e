/**
 * The browser-call variables as config parses them: nothing set keeps the defaults (no ICE
 * servers, any port, same origin only); a JSON array of ICE servers, a port range and origins
 * are read; bad values stop start-up with the variable named, never echoing a TURN credential.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const base = { SWITCHBOARD_DATA_DIR: '/tmp/x', SIP_PUBLIC_HOST: '127.0.0.1' };

describe('SWITCHBOARD_WEBRTC_* configuration', () => {
  it('defaults to no ICE servers, any free port, and the engine’s own origin only', () => {
    expect(loadConfig(base).webrtc).toEqual({ iceServers: [], portRange: undefined, allowedOrigins: [] });
  });

  it('reads ICE servers, the port range and the allowed origins', () => {
    const servers = [{ urls: 'stun:stun.example:3478' }, { urls: ['turn:turn.example:3478?transport=udp', 'turns:turn.example:5349'], username: 'u', credential: 'c' }];
    const c = loadConfig({
      ...base,
      SWITCHBOARD_WEBRTC_ICE_SERVERS: JSON.stringify(servers),
      SWITCHBOARD_WEBRTC_PORT_MIN: '40000',
      SWITCHBOARD_WEBRTC_PORT_MAX: '40100',
      SWITCHBOARD_WEBRTC_ALLOWED_ORIGINS: 'https://app.example/, https://other.example',
    });
    expect(c.webrtc).toEqual({ iceServers: servers, portRange: [40000, 40100], allowedOrigins: ['https://app.example', 'https://other.example'] });
  });

  it('refuses bad values with the variable named and no credential echoed', () => {
    const bad: Record<string, string>[] = [
      { SWITCHBOARD_WEBRTC_ICE_SERVERS: 'not json, credential=hunter2' },
      { SWITCHBOARD_WEBRTC_ICE_SERVERS: '{"urls":"stun:x"}' },
      { SWITCHBOARD_WEBRTC_ICE_SERVERS: '[{"urls":"http://x","credential":"hunter2"}]' },
      { SWITCHBOARD_WEBRTC_PORT_MIN: '40000' },
      { SWITCHBOARD_WEBRTC_PORT_MIN: '40100', SWITCHBOARD_WEBRTC_PORT_MAX: '40000' },
    ];
    for (const env of bad) {
      let error: unknown;
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/SWITCHBOARD_WEBRTC_/);
      expect((error as Error).message).not.toContain('hunter2');
    }
  });
});
