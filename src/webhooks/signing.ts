import crypto from 'node:crypto';

/**
 * Standard Webhooks signatures (standardwebhooks.com): `v1,` + base64 HMAC-SHA256 over
 * `${id}.${timestamp}.${body}`. Secrets of the form `whsec_<base64>` use the decoded bytes as the
 * key, as the standard's libraries do, so receivers can verify with them off the shelf.
 */
export function signingKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

export function sign(secret: string, id: string, timestampSec: number, body: string): string {
  const mac = crypto.createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSec}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * The headers of one delivery. Several secrets (a rotation's overlap) give one signature each,
 * space-separated, the current secret's first: a receiver holding either secret verifies.
 */
export function signedHeaders(secrets: string | readonly string[], id: string, timestampSec: number, body: string): SignedHeaders {
  const all = typeof secrets === 'string' ? [secrets] : secrets;
  if (all.length === 0) throw new Error('no signing secret');
  const signature = all.map((s) => sign(s, id, timestampSec, body)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSec), 'webhook-signature': signature };
}

/**
 * What a receiver does: any of the space-separated signatures matches, and the timestamp is
 * within the tolerance (replay protection).
 */
export function verify(secret: string, headers: Record<string, string | undefined>, body: string, nowSec: number, toleranceSec = 300): boolean {
  const id = headers['webhook-id'];
  const rawTs = headers['webhook-timestamp'];
  const given = headers['webhook-signature'];
  // Digits only: "1e3", "+1000" or " 1000" would otherwise verify a signature made over "1000".
  if (!id || rawTs === undefined || !/^\d{1,15}$/.test(rawTs) || !given) return false;
  const ts = Number(rawTs);
  if (Math.abs(nowSec - ts) > toleranceSec) return false;
  const expected = Buffer.from(sign(secret, id, ts, body));
  return given.split(' ').some((s) => {
    const b = Buffer.from(s);
    return b.length === expected.length && crypto.timingSafeEqual(b, expected);
  });
}
