/**
 * Whether two negotiations describe the same media stream: the 200 OK's answer against the
 * early media's (a 18x's SDP). Compared on what the RTP session acts on, not on SDP text: the
 * o= line's version or an attribute's order may differ while the stream stays the same, and
 * the session must then go on untouched (no re-learning of the source, no new decoders).
 */
import type { NegotiatedMedia } from '../../media/sdp-negotiate.ts';
import type { MasterKey } from '../../media/srtp/srtp-session.ts';

export function sameMedia(a: NegotiatedMedia, b: NegotiatedMedia): boolean {
  return (
    a.remote.address === b.remote.address &&
    a.remote.port === b.remote.port &&
    a.remote.rtcpPort === b.remote.rtcpPort &&
    a.codec === b.codec &&
    a.payloadType === b.payloadType &&
    a.ptimeMs === b.ptimeMs &&
    a.direction === b.direction &&
    a.remoteHold === b.remoteHold &&
    a.dtmfPayloadType === b.dtmfPayloadType &&
    a.dtmfClockRate === b.dtmfClockRate &&
    a.remoteFmtp === b.remoteFmtp &&
    sameReceive(a.receiveCodecs, b.receiveCodecs) &&
    sameSrtp(a.srtp, b.srtp)
  );
}

function sameReceive(a: NegotiatedMedia['receiveCodecs'], b: NegotiatedMedia['receiveCodecs']): boolean {
  if (a.size !== b.size) return false;
  for (const [pt, codec] of a) if (b.get(pt) !== codec) return false;
  return true;
}

function sameSrtp(a: NegotiatedMedia['srtp'], b: NegotiatedMedia['srtp']): boolean {
  if (!a || !b) return a === b;
  return a.suite === b.suite && sameKey(a.remote, b.remote) && sameKey(a.local, b.local);
}

function sameKey(a: MasterKey, b: MasterKey): boolean {
  return Buffer.compare(a.key, b.key) === 0 && Buffer.compare(a.salt, b.salt) === 0;
}
