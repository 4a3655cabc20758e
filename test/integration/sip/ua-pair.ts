import { UserAgent, type UserAgentOptions } from '../../../src/sip/user-agent.ts';

export const FAST_TIMERS = { t1Ms: 50, t2Ms: 400, t4Ms: 100 };

export const OFFER = 'v=0\r\no=alice 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n';
export const ANSWER = 'v=0\r\no=bob 2 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n';

export async function uaPair(extra: Partial<UserAgentOptions> = {}): Promise<{ alice: UserAgent; bob: UserAgent; close(): Promise<void> }> {
  const base: UserAgentOptions = { host: '127.0.0.1', port: 0, timers: FAST_TIMERS, ...extra };
  const alice = await UserAgent.create({ ...base, userName: 'alice' });
  const bob = await UserAgent.create({ ...base, userName: 'bob' });
  return {
    alice,
    bob,
    close: async () => {
      await Promise.all([alice.close(), bob.close()]);
    },
  };
}

export function target(ua: UserAgent, transport: 'udp' | 'tcp' = 'udp'): string {
  return `sip:${ua.config.userName}@127.0.0.1:${ua.port}${transport === 'tcp' ? ';transport=tcp' : ''}`;
}

export function once<T>(register: (cb: (v: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve) => register(resolve));
}

export async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
