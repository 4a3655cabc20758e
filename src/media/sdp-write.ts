/**
 * Serialising our own SDP, and the o= line bookkeeping RFC 3264 §8 asks for: the session
 * version moves up by one exactly when what we describe changes, and stays put on a refresh.
 */
import { addressType, type MediaDirection } from './sdp.ts';

/** Our side's o= line state across one dialog's offers and answers. */
export interface SdpSession {
  username: string;
  sessionId: string;
  version: number;
  /** The last SDP we sent in this dialog, to tell a change from a refresh. */
  lastSdp?: string;
}

export function createSdpSession(sessionId: string, version = 1, username = 'switchboard'): SdpSession {
  return { username, sessionId, version };
}

export interface WrittenFormat {
  payloadType: number;
  name: string;
  clockRate: number;
  channels: number;
  fmtp?: string;
}

export type WrittenMedia =
  | {
      kind: 'active';
      type: string;
      port: number;
      protocol: string;
      formats: readonly WrittenFormat[];
      ptimeMs: number;
      direction: MediaDirection;
      rtcpPort?: number;
      /** a=crypto values (RFC 4568), written after the formats. */
      cryptos?: readonly string[];
    }
  /** A stream we refuse: port 0, the offered format list echoed (RFC 3264 §6). */
  | { kind: 'rejected'; type: string; protocol: string; formatList: string };

export interface SdpDocument {
  address: string;
  sessionName: string;
  media: readonly WrittenMedia[];
}

function render(doc: SdpDocument, session: SdpSession, version: number): string {
  const ipType = addressType(doc.address);
  const lines = [
    'v=0',
    `o=${session.username} ${session.sessionId} ${version} IN ${ipType} ${doc.address}`,
    `s=${doc.sessionName}`,
    `c=IN ${ipType} ${doc.address}`,
    't=0 0',
  ];
  for (const m of doc.media) {
    if (m.kind === 'rejected') {
      lines.push(`m=${m.type} 0 ${m.protocol} ${m.formatList || '0'}`);
      continue;
    }
    lines.push(`m=${m.type} ${m.port} ${m.protocol} ${m.formats.map((f) => f.payloadType).join(' ')}`);
    if (m.rtcpPort !== undefined) lines.push(`a=rtcp:${m.rtcpPort}`);
    for (const f of m.formats) {
      // rtpmap even for static types: some stacks only trust what is spelled out.
      lines.push(`a=rtpmap:${f.payloadType} ${f.name}/${f.clockRate}${f.channels > 1 ? `/${f.channels}` : ''}`);
      if (f.fmtp) lines.push(`a=fmtp:${f.payloadType} ${f.fmtp}`);
    }
    for (const c of m.cryptos ?? []) lines.push(`a=crypto:${c}`);
    lines.push(`a=ptime:${m.ptimeMs}`, `a=${m.direction}`);
  }
  return lines.join('\r\n') + '\r\n';
}

/**
 * Render `doc` for this dialog: the same version if nothing changed since the last SDP we sent,
 * otherwise the next one. Returns the SDP and the session state to keep for the next round.
 */
export function writeSdp(doc: SdpDocument, session: SdpSession): { sdp: string; session: SdpSession } {
  if (session.lastSdp === undefined) {
    const sdp = render(doc, session, session.version);
    return { sdp, session: { ...session, lastSdp: sdp } };
  }
  const same = render(doc, session, session.version);
  if (same === session.lastSdp) return { sdp: same, session };
  const version = session.version + 1;
  const sdp = render(doc, session, version);
  return { sdp, session: { ...session, version, lastSdp: sdp } };
}
