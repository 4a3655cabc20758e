/**
 * The credential seam for 401/407 challenges. The digest arithmetic belongs to src/sip/digest.ts;
 * the UA only asks a `DigestResponder` for the header value to add and retries once.
 */
import { answerChallenge as computeAnswer, formatCredentials, parseChallenge } from './digest.ts';
import { header, type SipHeader, type SipRequest, type SipResponse } from './message.ts';

export interface AuthChallenge {
  /** 401 → WWW-Authenticate / Authorization, 407 → Proxy-Authenticate / Proxy-Authorization. */
  status: 401 | 407;
  /** The raw challenge header value. */
  challenge: string;
  method: string;
  uri: string;
  body: Buffer;
}

/** Returns the Authorization (or Proxy-Authorization) value, or undefined to give up. */
export type DigestResponder = (challenge: AuthChallenge) => string | undefined | Promise<string | undefined>;

/** Answers a challenge response; undefined when there is nothing to answer with. */
export async function answerChallenge(
  responder: DigestResponder | undefined,
  req: SipRequest,
  res: SipResponse,
): Promise<SipHeader | undefined> {
  if (!responder || (res.status !== 401 && res.status !== 407)) return undefined;
  const challenge = header(res, res.status === 401 ? 'www-authenticate' : 'proxy-authenticate');
  if (challenge === undefined) return undefined;
  const value = await responder({ status: res.status, challenge, method: req.method, uri: req.uri, body: req.body });
  if (value === undefined) return undefined;
  return { name: res.status === 401 ? 'authorization' : 'proxy-authorization', value };
}

/** Copy of a request for a re-send after a challenge: new CSeq, old credentials replaced. */
export function withCredentials(req: SipRequest, auth: SipHeader, cseq: number): SipRequest {
  const hdrs = req.headers
    .filter((h) => h.name !== 'via' && h.name !== auth.name)
    .map((h) => (h.name === 'cseq' ? { name: 'cseq', value: `${cseq} ${req.method}` } : { ...h }));
  const at = hdrs.findIndex((h) => h.name === 'content-length' || h.name === 'content-type');
  hdrs.splice(at === -1 ? hdrs.length : at, 0, auth);
  return { ...req, headers: hdrs };
}

/** A responder for one username/password using the shared digest module (RFC 2617/7616). */
export function digestCredentials(username: string, password: string): DigestResponder {
  let nc = 0;
  return (c) => {
    const ch = parseChallenge(c.challenge);
    if (!ch) return undefined;
    const creds = computeAnswer(ch, { username, password, method: c.method, uri: c.uri, nc: ++nc, body: c.body });
    return creds ? formatCredentials(creds) : undefined;
  };
}
