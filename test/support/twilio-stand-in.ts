import crypto from 'node:crypto';
import type http from 'node:http';
import { listen, readBody } from './http-util.ts';

export interface SentMessage {
  accountSid: string;
  /** `sid:token` from the basic auth header. */
  credentials: string;
  From: string;
  To: string;
  Body: string;
  StatusCallback?: string;
  sid: string;
}

/**
 * A stand-in for Twilio's Messages API: POST /2010-04-01/Accounts/{sid}/Messages.json
 * (form-encoded, basic auth) records the message and answers 201 with a fresh SM… SID.
 */
export class TwilioStandIn {
  readonly sent: SentMessage[] = [];
  /** Answer this many next sends with this status (e.g. 500) instead of accepting them. */
  failNext = 0;
  failStatus = 500;
  private server!: { url: string; close(): Promise<void> };

  static async start(): Promise<TwilioStandIn> {
    const s = new TwilioStandIn();
    s.server = await listen((req, res) => void s.handle(req, res));
    return s;
  }

  /** What TWILIO_BASE_URL should be. */
  get baseUrl(): string {
    return this.server.url;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
    const text = await readBody(req);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 20404, message: 'not found' }));
      return;
    }
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const credentials = auth ? Buffer.from(auth[1]!, 'base64').toString('utf8') : '';
    if (!credentials.startsWith(`${decodeURIComponent(m[1]!)}:`)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 20003, message: 'Authenticate' }));
      return;
    }
    if (this.failNext > 0) {
      this.failNext--;
      res.writeHead(this.failStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 30001, message: 'scripted failure' }));
      return;
    }
    const form = Object.fromEntries(new URLSearchParams(text));
    const sid = `SM${crypto.randomBytes(16).toString('hex')}`;
    this.sent.push({
      accountSid: decodeURIComponent(m[1]!),
      credentials,
      From: form.From ?? '',
      To: form.To ?? '',
      Body: form.Body ?? '',
      StatusCallback: form.StatusCallback,
      sid,
    });
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sid, status: 'queued', from: form.From, to: form.To, body: form.Body, account_sid: m[1] }));
  }
}
