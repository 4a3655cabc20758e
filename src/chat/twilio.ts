import crypto from 'node:crypto';
import { ProviderError } from '../util/errors.ts';
import { httpFailureText, networkFailureText, originOf, scrub } from '../providers/describe-error.ts';

/**
 * Twilio's answer in one line: its 401 is the sender's account SID and auth token (ours to name,
 * its text left out); other statuses carry Twilio's message, the token blanked.
 */
function twilioFailureText(status: number, message: unknown, authToken: string): string {
  if (status === 401) return "401 authentication failed (check the WhatsApp sender's account_sid and auth_token)";
  if (status >= 200 && status < 300) return `${status} answer without a message SID`;
  return httpFailureText(status, typeof message === 'string' ? scrub(message, [authToken]) : undefined);
}

/**
 * Twilio's request signature: base64 HMAC-SHA1 keyed with the auth token over the full URL
 * Twilio called, followed by every POST parameter name and value, names sorted.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, k) => acc + k + params[k], url);
  return crypto.createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export function validTwilioSignature(authToken: string, url: string, params: Record<string, string>, given: string | undefined): boolean {
  if (!given) return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const actual = Buffer.from(given);
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
}

export interface TwilioSend {
  accountSid: string;
  authToken: string;
  /** E.164 numbers; the `whatsapp:` channel prefix is added here. */
  from: string;
  to: string;
  body: string;
  statusCallback?: string;
  signal?: AbortSignal;
}

/** The Messages API of Twilio (or anything speaking it at TWILIO_BASE_URL). */
export class TwilioClient {
  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = 15_000,
  ) {}

  async send(msg: TwilioSend): Promise<{ sid: string; status: string }> {
    const form = new URLSearchParams({ From: `whatsapp:${msg.from}`, To: `whatsapp:${msg.to}`, Body: msg.body });
    if (msg.statusCallback) form.set('StatusCallback', msg.statusCallback);
    const url = `${this.baseUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(msg.accountSid)}/Messages.json`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${msg.accountSid}:${msg.authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        signal: msg.signal ? AbortSignal.any([msg.signal, timeout]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      const cause = networkFailureText(err, this.baseUrl) ?? (timeout.aborted ? `no answer within ${this.timeoutMs} ms (${originOf(this.baseUrl)})` : `unreachable: ${scrub((err as Error).message, [msg.authToken])}`);
      const e = new ProviderError(`Twilio: ${cause}`, 'twilio');
      (e as { cause?: unknown }).cause = err;
      throw e;
    }
    let body: { sid?: unknown; status?: unknown; message?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Error pages are not JSON; the status code says enough.
    }
    if (!res.ok || typeof body.sid !== 'string') {
      throw new ProviderError(`Twilio: ${twilioFailureText(res.status, body.message, msg.authToken)}`, 'twilio', res.status >= 500);
    }
    return { sid: body.sid, status: typeof body.status === 'string' ? body.status : 'queued' };
  }
}
