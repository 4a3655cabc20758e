/**
 * What the voice built-in tools need from a live call. The tools only decide and validate; the
 * call session implements this (SIP REFER or a bridged leg, RFC 4733 digits, TTS, the engine
 * swap), so every tool is testable with a fake and the session never parses model arguments.
 */

export type StopKey = '#' | '*';

export interface CollectDigitsOptions {
  stopKey: StopKey;
  /** Inter-digit timeout: collection ends after this long without a key (also before the first). */
  timeoutMs: number;
  /** Ends collection once this many digits arrived (the stop key is not counted). */
  maxDigits?: number;
}

export interface CollectedDigits {
  /** Without the stop key. */
  digits: string;
  endedBy: 'stop-key' | 'timeout' | 'max-digits' | 'aborted';
}

/** A phone number (E.164 or national as configured) or a `sip:` URI. */
export interface TransferTarget {
  target: string;
  /** Free text for the call record (the model's reason). */
  reason?: string;
}

export type TransferResult =
  | { ok: true; method: 'refer' | 'bridge' }
  | { ok: false; reason: 'busy' | 'no-answer' | 'rejected' | 'failed'; detail?: string };

export type CallerIdMode = 'outbound_number' | 'customer_number' | 'custom';

export interface WarmTransferOptions {
  /** Number to dial, or a SIP address / extension when `customSip`. */
  supervisor: string;
  customSip: boolean;
  /** Phone number (by id) whose trunk dials the supervisor. */
  outboundPhoneId: number;
  callerIdMode: CallerIdMode;
  customCallerId: string | null;
  /** The caller hears this, then hold music (`none`: silence) at `holdMusicVolume` (0–100). */
  holdMessage: string;
  holdMusic: 'hold_music' | 'none';
  holdMusicVolume: number;
  /** First words to the supervisor, then the AI summary written per `summaryInstructions`. */
  briefingInitialMessage: string;
  summaryInstructions: string;
  /** What the model said about the call when it asked for the transfer. */
  reason: string;
  modelSummary: string | null;
  /** Spoken to the caller once the legs are bridged. */
  connectedMessage: string;
}

export type WarmTransferResult =
  | { outcome: 'accepted' }
  | { outcome: 'refused' | 'no-answer' | 'failed'; detail?: string };

export interface CallControl {
  /** BYE. `afterSpeech`: let the assistant finish what it is saying first. */
  hangUp(afterSpeech: boolean): Promise<void>;
  /** RFC 4733 events (in-band as a fallback), in order, at the usual 100 ms on / 100 ms off. */
  sendDtmf(digits: string): Promise<void>;
  /** Digits the caller presses until the stop key, the timeout or `maxDigits`. */
  collectDigits(opts: CollectDigitsOptions, signal?: AbortSignal): Promise<CollectedDigits>;
  /** Cold transfer: REFER when the trunk accepts it, else a bridged outbound leg. */
  transferBlind(target: TransferTarget): Promise<TransferResult>;
  /** Warm transfer; resolves once the supervisor accepted (legs bridged) or it failed. */
  transferWarm(opts: WarmTransferOptions): Promise<WarmTransferResult>;
  /**
   * The call goes on under another assistant's configuration (prompt, voice, tools), in the same
   * conversation. `announced`: what was just said to the caller about the handover (it joins the
   * conversation the target sees).
   */
  swapAssistant(assistantId: number, opts: { speakGreeting: boolean; announced?: string }): Promise<void>;
  /** Speak a fixed text to the caller (not generated); resolves when it has been played. */
  say(text: string): Promise<void>;
}
