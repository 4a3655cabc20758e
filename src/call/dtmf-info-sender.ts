/**
 * Keys sent as SIP INFO (application/dtmf-relay), one request per key, for calls whose far end
 * negotiated no telephone-event: each INFO waits for its 2xx, then for the key's length and the
 * gap, so a carrier's IVR sees presses at the pace RFC 4733 sending would give them.
 */
import { digitToEvent } from '../media/dtmf.ts';
import type { DtmfSendOptions } from '../media/media-types.ts';
import type { Dialog } from '../sip/dialog.ts';
import { DTMF_RELAY, dtmfRelayBody } from '../sip/info-dtmf.ts';
import type { Clock } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';

export async function sendDtmfInfo(dialog: Dialog, digits: string, clock: Clock, options: DtmfSendOptions = {}): Promise<void> {
  const keys = [...digits];
  const bad = keys.find((d) => d.toLowerCase() === 'flash' || digitToEvent(d) === undefined);
  if (bad !== undefined || keys.length === 0) throw new RangeError(`not DTMF digits: ${JSON.stringify(digits)}`);
  const durationMs = options.durationMs ?? 100;
  const gapMs = options.gapMs ?? 60;
  for (const [i, key] of keys.entries()) {
    const res = await dialog.request('INFO', { body: Buffer.from(dtmfRelayBody(key.toUpperCase(), durationMs)), contentType: DTMF_RELAY });
    if (res.status < 200 || res.status >= 300) throw new AppError(`the far end refused DTMF in INFO (${res.status})`, 409, 'DTMF_INFO_REFUSED');
    if (i < keys.length - 1) await new Promise<void>((resolve) => clock.setTimeout(resolve, durationMs + gapMs));
  }
}
