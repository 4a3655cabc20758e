/**
 * Blind transfer by SIP REFER (RFC 3515): we ask the far end (the trunk) to call the target
 * itself. It answers 202 and then reports the new call's progress in NOTIFYs whose body is a
 * message/sipfrag status line ("SIP/2.0 180 Ringing", … "SIP/2.0 200 OK"). Only a final 2xx
 * in a NOTIFY means the caller is really connected; then our leg is hung up.
 *
 * The NOTIFY listener goes on the dialog before the REFER is sent: over UDP the first NOTIFY
 * may overtake the 202.
 */
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest } from '../../sip/message.ts';
import type { Clock } from '../../util/clock.ts';

export type ReferOutcome =
  /** The target answered (NOTIFY 2xx). */
  | { ok: true; referStatus: number; notifyStatus: number }
  /** The REFER itself was refused (405/501/603, 403, 481…) or timed out: try a bridge instead. */
  | { ok: false; stage: 'refer'; referStatus: number }
  /** Accepted, but the far end could not reach the target (NOTIFY ≥ 300, or no final NOTIFY). */
  | { ok: false; stage: 'notify'; referStatus: number; notifyStatus: number | null };

/** Status code of a sipfrag body: "SIP/2.0 200 OK". */
export function sipfragStatus(body: string): number | undefined {
  const m = /^SIP\/2\.0\s+(\d{3})\b/.exec(body.trim());
  return m ? Number(m[1]) : undefined;
}

/** `target`: a sip: URI, or a number put on the trunk's host. */
export function referTarget(target: string, trunkHost: string): string {
  return /^sips?:/i.test(target) ? target : `sip:${target}@${trunkHost}`;
}

export async function sendRefer(
  dialog: Dialog,
  referTo: string,
  opts: { clock: Clock; referredBy?: string; notifyTimeoutMs?: number },
): Promise<ReferOutcome> {
  let settle!: (status: number | null) => void;
  const final = new Promise<number | null>((r) => (settle = r));
  const onRequest = (req: SipRequest, respond: (status: number) => void): void => {
    if (req.method !== 'NOTIFY') {
      respond(405);
      return;
    }
    respond(200);
    const status = sipfragStatus(req.body.toString('utf8'));
    if (status !== undefined && status >= 200) settle(status);
  };
  dialog.on('request', onRequest);
  const ended = (): void => settle(null);
  dialog.once('ended', ended);
  const timer = opts.clock.setTimeout(() => settle(null), opts.notifyTimeoutMs ?? 30_000);
  try {
    const res = await dialog.request('REFER', {
      headers: [
        { name: 'refer-to', value: `<${referTo}>` },
        ...(opts.referredBy ? [{ name: 'referred-by', value: `<${opts.referredBy}>` }] : []),
      ],
    });
    if (res.status < 200 || res.status >= 300) return { ok: false, stage: 'refer', referStatus: res.status };
    const notifyStatus = await final;
    if (notifyStatus !== null && notifyStatus < 300) return { ok: true, referStatus: res.status, notifyStatus };
    return { ok: false, stage: 'notify', referStatus: res.status, notifyStatus };
  } catch {
    return { ok: false, stage: 'refer', referStatus: 500 };
  } finally {
    timer.cancel();
    dialog.off('request', onRequest);
    dialog.off('ended', ended);
  }
}
