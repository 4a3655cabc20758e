/**
 * Our PRACK (RFC 3262 §7.2) answered to a 401/407 like any request (RFC 3261 §22.2): resent with
 * credentials for that challenge, from the same digest responder the INVITE used, with the next
 * CSeq of the early dialog. Each challenge is answered once: a second challenge to the answered
 * PRACK (a stale nonce, say) gets one more answer, and past MAX_PRACK_AUTH answers we give up,
 * which leaves the provisional unacknowledged (the UAS then ends the INVITE with a 5xx).
 */
import type { SipRequest, SipResponse } from './message.ts';
import { answerChallenge, withCredentials, type DigestResponder } from './user-agent-auth.ts';

export const MAX_PRACK_AUTH = 2;

export interface PrackSenderDeps {
  /** Sends a request in its own client transaction; final response (408/503 synthesised). */
  sendRequest(req: SipRequest): Promise<SipResponse>;
  credentials: DigestResponder | undefined;
  /** The next CSeq number of the early dialog (each call takes one). */
  nextSeq(): number;
  /** True once the INVITE is over: a challenge then is not answered. */
  done(): boolean;
}

/** Sends `prack`, answering challenges; resolves with the last final response. */
export async function sendPrack(deps: PrackSenderDeps, prack: SipRequest): Promise<SipResponse> {
  let req = prack;
  let res = await deps.sendRequest(req);
  for (let answered = 0; answered < MAX_PRACK_AUTH && (res.status === 401 || res.status === 407) && !deps.done(); answered++) {
    const auth = await answerChallenge(deps.credentials, req, res).catch(() => undefined);
    if (!auth) break;
    req = withCredentials(req, auth, deps.nextSeq());
    res = await deps.sendRequest(req);
  }
  return res;
}
