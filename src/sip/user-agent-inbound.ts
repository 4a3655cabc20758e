/**
 * UAS-side routing of requests the transaction layer hands up (RFC 3261 §8.2, §9.2, §12.2.2):
 * in-dialog requests to their dialog, CANCEL to the pending INVITE, OPTIONS answered here,
 * and 405/501/420/481/422 for what we will not or cannot do.
 */
import { dialogId } from './dialog-requests.ts';
import { negotiateAsUas } from './dialog-session-timer.ts';
import { header, type SipHeader, type SipRequest } from './message.ts';
import { KNOWN_METHODS } from './methods.ts';
import type { ServerTransaction } from './transaction-layer.ts';
import { tagOf } from './transaction-headers.ts';
import { buildResponse } from './transaction-response.ts';
import { ServerInviteTransaction } from './transaction-server.ts';
import type { Source } from './transaction-types.ts';
import { UA_ALLOW, UA_SUPPORTED, type UaContext } from './user-agent-context.ts';
import { IncomingInvite } from './user-agent-incoming-invite.ts';
import { checkRequest } from './validate.ts';

const ALLOWED = new Set(UA_ALLOW.split(',').map((m) => m.trim()));
const SUPPORTED = new Set(UA_SUPPORTED.split(',').map((m) => m.trim()));
const allowHeader = { name: 'allow', value: UA_ALLOW };

export function handleInbound(ua: UaContext, req: SipRequest, tx: ServerTransaction | undefined, source: Source): void {
  const fromTag = tagOf(header(req, 'from')) ?? '';
  const toTag = tagOf(header(req, 'to'));
  if (toTag !== undefined) {
    const early = req.method === 'PRACK' ? ua.earlyDialogs.get(dialogId(header(req, 'call-id') ?? '', toTag, fromTag)) : undefined;
    if (early && tx) {
      early.handlePrack(req, tx);
      return;
    }
    const dialog = ua.findDialog(dialogId(header(req, 'call-id') ?? '', toTag, fromTag));
    if (dialog) dialog.handleRequest(req, tx);
    else if (tx) tx.respond(buildResponse(req, 481));
    return;
  }
  if (!tx) return; // an ACK outside any dialog: nothing to do

  const check = checkRequest(req, { extensions: [...SUPPORTED] });
  if (!check.ok) {
    const hdrs: SipHeader[] = [];
    // Allow lists what this UA does, not every method the parser knows.
    if (check.status === 501 || check.status === 405) hdrs.push(allowHeader);
    if (check.unsupported) hdrs.push({ name: 'unsupported', value: check.unsupported.join(', ') });
    if (check.accept) hdrs.push({ name: 'accept', value: check.accept.join(', ') });
    tx.respond(buildResponse(req, check.status, { toTag: ua.newTag(), reason: check.reason, headers: hdrs }));
    return;
  }
  switch (req.method) {
    case 'INVITE':
      if (tx instanceof ServerInviteTransaction) newInvite(ua, req, tx, source);
      return;
    case 'CANCEL':
      handleCancel(ua, req, tx);
      return;
    case 'OPTIONS':
      if (ua.unavailable) {
        tx.respond(buildResponse(req, 503, { toTag: ua.newTag(), headers: [{ name: 'retry-after', value: String(ua.unavailable.retryAfterS) }] }));
        return;
      }
      tx.respond(
        buildResponse(req, 200, {
          toTag: ua.newTag(),
          headers: [allowHeader, { name: 'accept', value: 'application/sdp' }, { name: 'supported', value: UA_SUPPORTED }],
        }),
      );
      return;
    case 'BYE':
      tx.respond(buildResponse(req, 481, { toTag: ua.newTag() }));
      return;
  }
  // §8.2.1: a method we know but do not take here is 405; one we have never heard of is 501.
  const known = KNOWN_METHODS.includes(req.method) || ALLOWED.has(req.method);
  tx.respond(buildResponse(req, known ? 405 : 501, { toTag: ua.newTag(), headers: [allowHeader] }));
}

function newInvite(ua: UaContext, req: SipRequest, tx: ServerInviteTransaction, source: Source): void {
  const st = negotiateAsUas(req, ua.config.minSeSec);
  if (st.kind === 'too-small') {
    tx.respond(buildResponse(req, 422, { toTag: ua.newTag(), headers: [{ name: 'min-se', value: String(st.minSeSec) }] }));
    return;
  }
  const handler = ua.onInvite;
  if (!handler) {
    tx.respond(buildResponse(req, 480, { toTag: ua.newTag() }));
    return;
  }
  const incoming = new IncomingInvite(ua, req, tx, source, st);
  ua.pendingIncoming.set(tx, incoming);
  try {
    handler(incoming);
  } catch {
    if (incoming.state === 'pending') incoming.reject(500);
  }
}

function handleCancel(ua: UaContext, req: SipRequest, tx: ServerTransaction): void {
  const invite = ua.layer.findInviteForCancel(req);
  if (!invite) {
    tx.respond(buildResponse(req, 481, { toTag: ua.newTag() }));
    return;
  }
  const incoming = ua.pendingIncoming.get(invite);
  // §9.2: the CANCEL's response carries the same To-tag as the INVITE's responses.
  tx.respond(buildResponse(req, 200, incoming ? { toTag: incoming.toTag } : {}));
  incoming?.cancelledByPeer();
}
