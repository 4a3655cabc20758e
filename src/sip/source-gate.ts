/**
 * What the transport asks before it reads or answers anything from a peer, so a banned source
 * costs one lookup and hears nothing back: not a 400 for its garbage, not a keep-alive pong, not
 * a response to a request that slipped in before the ban. The SIP server backs it with the abuse
 * guard (src/sip/abuse-guard.ts).
 */
export interface SourceGate {
  /** False for a source that must get nothing: its input is dropped unread (UDP) or its connection closed (TCP). */
  admits(address: string): boolean;
  /**
   * Input from `address` that could not be parsed or framed, counted against the source. False
   * when the source is (now) banned: then it must not be answered.
   */
  malformed(address: string): boolean;
}

/** Whether serialized SIP bytes are a response (start line "SIP/2.0 <status>"), without parsing. */
export function isResponseBytes(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.toString('latin1', 0, 8) === 'SIP/2.0 ';
}
