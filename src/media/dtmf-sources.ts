/**
 * One call, several ways a key press may arrive: RFC 4733 events, SIP INFO, tones in the audio.
 * A peer that uses two of them for the same press (INFO plus the tone left in the audio, or
 * RFC 4733 plus INFO) must not make one press count twice, so a call listens to one signalled
 * way: the first of RFC 4733 / INFO to deliver a key is the call's, and keys from the other are
 * dropped from then on. In-band keys count only until a signalled key arrives (a trunk that
 * signals keys often leaves their tones in the audio too). An in-band key is reported when its
 * tone ends, and an INFO is sent when the key goes down, so the INFO of the first press normally
 * wins that race; if it does not, that one press is reported twice.
 */
export type DtmfSource = 'rfc4733' | 'info' | 'inband';

export class DtmfSourceLock {
  private signalled: 'rfc4733' | 'info' | undefined;

  /** Whether a key from `source` is delivered. */
  accept(source: DtmfSource): boolean {
    if (source === 'inband') return this.signalled === undefined;
    this.signalled ??= source;
    return this.signalled === source;
  }

  get source(): DtmfSource | undefined {
    return this.signalled;
  }
}
