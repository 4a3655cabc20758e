import { afterEach, describe, expect, it } from 'vitest';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { header } from '../../../src/sip/message.ts';
import type { IncomingInvite } from '../../../src/sip/user-agent-incoming-invite.ts';
import { InviteFailedError } from '../../../src/sip/user-agent-outgoing-invite.ts';
import { ANSWER, OFFER, once, target, uaPair, waitFor } from './ua-pair.ts';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe.each(['udp', 'tcp'] as const)('two UAs over %s', (transport) => {
  it('INVITE → 180 → 200 → ACK → BYE', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    const bobDialog = once<Dialog>((cb) => {
      bob.onInvite = (inc) => {
        expect(inc.offer).toBe(OFFER);
        inc.ringing();
        setTimeout(() => cb(inc.accept(ANSWER)), 20);
      };
    });
    const call = alice.invite(target(bob, transport), OFFER);
    const statuses: number[] = [];
    call.on('progress', (res) => statuses.push(res.status));
    const aliceDialog = await call.result;
    const bd = await bobDialog;
    expect(statuses).toContain(180);
    expect(aliceDialog.remoteSdp).toBe(ANSWER);
    expect(aliceDialog.callId).toBe(bd.callId);
    expect(aliceDialog.remoteTag).toBe(bd.localTag);
    // Bob's 2xx retransmissions stop once the ACK arrives.
    await once<void>((cb) => bd.once('confirmed', cb));

    const ended = once<{ reason: string }>((cb) => bd.once('ended', cb));
    const byeRes = await aliceDialog.bye();
    expect(byeRes?.status).toBe(200);
    expect((await ended).reason).toBe('remote-bye');
    expect(alice.stats.dialogs).toBe(0);
    expect(bob.stats.dialogs).toBe(0);
  });

  it('CANCEL before answer gets 487', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    const cancelled = once<IncomingInvite>((cb) => {
      bob.onInvite = (inc) => {
        inc.ringing();
        inc.once('cancel', () => cb(inc));
      };
    });
    const call = alice.invite(target(bob, transport), OFFER);
    await once<void>((cb) => call.on('progress', (res) => res.status === 180 && cb()));
    call.cancel();
    const err = await call.result.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(InviteFailedError);
    expect((err as InviteFailedError).status).toBe(487);
    expect((await cancelled).state).toBe('cancelled');
  });

  it('re-INVITE inside the dialog', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    const bobDialog = once<Dialog>((cb) => {
      bob.onInvite = (inc) => cb(inc.accept(ANSWER));
    });
    const aliceDialog = await alice.invite(target(bob, transport), OFFER).result;
    const bd = await bobDialog;
    await once<void>((cb) => bd.once('confirmed', cb));
    const newOffer = OFFER.replace('1 1 IN', '1 2 IN');
    const newAnswer = ANSWER.replace('2 2 IN', '2 3 IN');
    bd.on('reinvite', (re) => {
      expect(re.offer).toBe(newOffer);
      re.accept(newAnswer);
    });
    const res = await aliceDialog.reinvite(newOffer);
    expect(res.status).toBe(200);
    expect(aliceDialog.remoteSdp).toBe(newAnswer);
    await waitFor(() => bd.remoteSdp === newOffer);
    await once<void>((cb) => bd.once('confirmed', cb));
    const info = await aliceDialog.request('INFO', { body: Buffer.from('Signal=5\r\n'), contentType: 'application/dtmf-relay' });
    expect(info.status).toBe(200);
    await aliceDialog.bye();
  });
});

describe('rejections and requests outside a dialog', () => {
  it('rejects with the status the application picks', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    bob.onInvite = (inc) => inc.reject(486, 'Busy Here', [{ name: 'retry-after', value: '30' }]);
    const err = await alice.invite(target(bob), OFFER).result.catch((e: unknown) => e);
    expect((err as InviteFailedError).status).toBe(486);
    expect(header((err as InviteFailedError).response!, 'retry-after')).toBe('30');
  });

  it('answers OPTIONS with 200, Allow and Accept', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    const res = await alice.options(target(bob));
    expect(res.status).toBe(200);
    expect(header(res, 'allow')).toContain('INVITE');
    expect(header(res, 'accept')).toBe('application/sdp');
  });

  it('times out (408) against a silent peer', async () => {
    const { alice, close } = await uaPair();
    cleanup = close;
    const res = await alice.options('sip:nobody@127.0.0.1:9');
    expect([408, 503]).toContain(res.status);
  });
});
