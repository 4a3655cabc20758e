import { afterEach, describe, expect, it } from 'vitest';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { header } from '../../../src/sip/message.ts';
import type { IncomingInvite } from '../../../src/sip/user-agent-incoming-invite.ts';
import { UserAgent, type UserAgentOptions } from '../../../src/sip/user-agent.ts';
import type { SipDns } from '../../../src/sip/locate.ts';
import { FAST_TIMERS, once } from './ua-pair.ts';

const OFFER6 = 'v=0\r\no=alice 1 1 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n';
const ANSWER6 = 'v=0\r\no=bob 2 2 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n';

const uas: UserAgent[] = [];
afterEach(async () => {
  await Promise.all(uas.splice(0).map((ua) => ua.close()));
});

async function ua(userName: string, host: string, extra: Partial<UserAgentOptions> = {}): Promise<UserAgent> {
  const created = await UserAgent.create({ host, port: 0, timers: FAST_TIMERS, userName, ...extra });
  uas.push(created);
  return created;
}

/** Answers the next INVITE with `answer`; resolves with it and the dialog. */
function answerNext(callee: UserAgent, answer = ANSWER6): Promise<{ inc: IncomingInvite; dialog: Dialog }> {
  return once((cb) => {
    callee.onInvite = (inc) => cb({ inc, dialog: inc.accept(answer) });
  });
}

/** INVITE → 200 → ACK → BYE → 200, from `caller` to `uri`; returns what the callee saw. */
async function callAndHangUp(caller: UserAgent, callee: UserAgent, uri: string, offer = OFFER6): Promise<IncomingInvite & { answeredFrom: string }> {
  const answered = answerNext(callee);
  const dialog = await caller.invite(uri, offer).result;
  const { inc, dialog: theirs } = await answered;
  expect(dialog.remoteSdp).toBe(ANSWER6);
  await once<void>((cb) => theirs.once('confirmed', cb));
  const ended = once<{ reason: string }>((cb) => theirs.once('ended', cb));
  expect((await dialog.bye())?.status).toBe(200);
  expect((await ended).reason).toBe('remote-bye');
  expect(caller.stats.dialogs).toBe(0);
  expect(callee.stats.dialogs).toBe(0);
  return Object.assign(inc, { answeredFrom: dialog.remoteTarget });
}

describe.each(['udp', 'tcp'] as const)('two UAs on ::1 over %s', (transport) => {
  it('INVITE → 200 → ACK → BYE with bracketed Via, Contact and Call-ID, and received=::1', async () => {
    const alice = await ua('alice', '::1');
    const bob = await ua('bob', '::1');
    const t = transport === 'tcp' ? ';transport=tcp' : '';
    const inc = await callAndHangUp(alice, bob, `sip:bob@[::1]:${bob.port}${t}`);
    const via = header(inc.request, 'via')!;
    expect(via).toMatch(new RegExp(`^SIP/2.0/${transport.toUpperCase()} \\[::1\\]:${alice.port};`));
    expect(via).toContain('received=::1');
    expect(header(inc.request, 'contact')).toBe(`<sip:alice@[::1]:${alice.port}${t}>`);
    expect(header(inc.request, 'call-id')).toMatch(/@\[::1\]$/);
    expect(inc.source.address).toBe('::1');
  });
});

describe('a dual-stack UA on ::', () => {
  it.each(['udp', 'tcp'] as const)('takes a call over %s from 127.0.0.1 and one from ::1 on one port, IPv4 peers seen without the ::ffff: prefix', async (transport) => {
    const bob = await ua('bob', '::');
    // Bound to both families, advertised as one address of each (SIP_PUBLIC_HOST, SIP_PUBLIC_HOST6).
    bob.config.host = '127.0.0.1';
    bob.config.host6 = '::1';
    const t = transport === 'tcp' ? ';transport=tcp' : '';
    const alice4 = await ua('alice', '127.0.0.1');
    const from4 = await callAndHangUp(alice4, bob, `sip:bob@127.0.0.1:${bob.port}${t}`);
    expect(from4.source.address).toBe('127.0.0.1');
    expect(header(from4.request, 'via')).toContain('received=127.0.0.1');
    expect(from4.answeredFrom).toBe(`sip:bob@127.0.0.1:${bob.port}${t}`);
    const alice6 = await ua('alice', '::1');
    const from6 = await callAndHangUp(alice6, bob, `sip:bob@[::1]:${bob.port}${t}`);
    expect(from6.source.address).toBe('::1');
    expect(from6.answeredFrom).toBe(`sip:bob@[::1]:${bob.port}${t}`);
  });

  it('advertises host6 in Via and Contact to IPv6 peers and host to IPv4 ones', async () => {
    const bob = await ua('bob', '::1');
    const bob4 = await ua('bob', '127.0.0.1');
    const alice = await ua('alice', '::');
    alice.config.host = '127.0.0.1';
    alice.config.host6 = '::1';
    const to6 = await callAndHangUp(alice, bob, `sip:bob@[::1]:${bob.port}`);
    expect(header(to6.request, 'via')).toMatch(/^SIP\/2.0\/UDP \[::1\]:/);
    expect(header(to6.request, 'contact')).toBe(`<sip:alice@[::1]:${alice.port}>`);
    const to4 = await callAndHangUp(alice, bob4, `sip:bob@127.0.0.1:${bob4.port}`);
    expect(header(to4.request, 'via')).toMatch(/^SIP\/2.0\/UDP 127\.0\.0\.1:/);
    expect(header(to4.request, 'contact')).toBe(`<sip:alice@127.0.0.1:${alice.port}>`);
  });
});

describe('AAAA', () => {
  it('a name with only an IPv6 address is reached over IPv6 by a UA that can send IPv6', async () => {
    const bob = await ua('bob', '::1');
    const dns: SipDns = {
      naptr: () => Promise.resolve([]),
      srv: () => Promise.resolve([]),
      addresses: () => Promise.resolve([]),
      addresses6: (name) => Promise.resolve(name === 'v6only.test' ? ['::1'] : []),
    };
    const alice = await ua('alice', '::1', { dns });
    const inc = await callAndHangUp(alice, bob, `sip:bob@v6only.test:${bob.port}`);
    expect(inc.source.address).toBe('::1');
  });
});

describe('the advertised host follows the place an INVITE goes to', () => {
  /** SRV: the IPv6-only target first, then the IPv4-only one, both at `port`. */
  function v6ThenV4(port: number): SipDns {
    return {
      naptr: () => Promise.resolve([]),
      srv: (name) =>
        Promise.resolve(
          name === '_sip._udp.carrier.test'
            ? [
                { name: 'v6.carrier.test', port, priority: 1, weight: 1 },
                { name: 'v4.carrier.test', port, priority: 2, weight: 1 },
              ]
            : [],
        ),
      addresses: (name) => Promise.resolve(name === 'v4.carrier.test' ? ['127.0.0.1'] : []),
      addresses6: (name) => Promise.resolve(name === 'v6.carrier.test' ? ['::1'] : []),
    };
  }

  it('with host6, the IPv6 place gets the offer made for host6', async () => {
    const bob = await ua('bob', '::');
    const alice = await ua('alice', '::', { dns: v6ThenV4(bob.port) });
    alice.config.host = '127.0.0.1';
    alice.config.host6 = '::1';
    const asked: string[] = [];
    const answered = answerNext(bob);
    const invite = alice.invite('sip:bob@carrier.test', (host) => (asked.push(host), OFFER6.replace(/::1/g, host)));
    await invite.result;
    const { inc } = await answered;
    expect(asked).toEqual(['::1']);
    expect(invite.advertised).toBe('::1');
    expect(inc.source.address).toBe('::1');
    expect(header(inc.request, 'contact')).toBe(`<sip:alice@[::1]:${alice.port}>`);
  });

  it('without an IPv6 host, the IPv6 place is skipped (nothing sent there) and the IPv4 one gets the IPv4 offer', async () => {
    const bob = await ua('bob', '::');
    const alice = await ua('alice', '::', { dns: v6ThenV4(bob.port) });
    alice.config.host = '127.0.0.1';
    const asked: string[] = [];
    const sources: string[] = [];
    const answered = once<IncomingInvite>((cb) => {
      bob.onInvite = (inc) => {
        sources.push(inc.source.address);
        inc.accept(ANSWER6);
        cb(inc);
      };
    });
    const invite = alice.invite('sip:bob@carrier.test', (host) => (asked.push(host), `v=0\r\no=a 1 1 IN IP4 ${host}\r\ns=-\r\nc=IN IP4 ${host}\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n`));
    await invite.result;
    const inc = await answered;
    expect(asked).toEqual(['127.0.0.1']);
    expect(sources).toEqual(['127.0.0.1']);
    expect(inc.offer).toContain('c=IN IP4 127.0.0.1');
  });

  it('without an IPv6 host and only an IPv6 place, the INVITE fails 503 "No IPv6 public host" with code no-public-ipv6', async () => {
    const bob = await ua('bob', '::1');
    let invited = 0;
    bob.onInvite = () => invited++;
    const alice = await ua('alice', '::');
    alice.config.host = '127.0.0.1';
    const err = await alice.invite(`sip:bob@[::1]:${bob.port}`, () => OFFER6).result.catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'no-public-ipv6', reason: expect.stringContaining('No IPv6 public host') });
    expect(invited).toBe(0);
  });
});
