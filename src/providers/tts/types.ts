/**
 * Text-to-speech: one provider per vendor. Output is always the engine's frame (20 ms, 16 kHz,
 * Int16) whatever the vendor speaks, so callers never resample; the first frame is yielded as soon
 * as the vendor has sent enough audio for it.
 */
import type { AudioFrame } from '../../audio/frame.ts';

/**
 * Which assistant voice options a provider honours. An option marked false is accepted and
 * ignored (an assistant configured for another vendor must still be able to speak), never an error.
 */
export interface TtsOptionSupport {
  /** `speech_speed` */
  speed: boolean;
  /** `voice_stability` */
  stability: boolean;
  /** `voice_similarity` */
  similarity: boolean;
  /** `tts_emotion_enabled` */
  emotion: boolean;
  /** `language`: the provider is told which language it is speaking. */
  language: boolean;
}

export interface TtsCapabilities {
  /** Audio arrives while the vendor is still synthesizing (time to first frame < whole utterance). */
  streaming: boolean;
  /** The vendor's native rate; output is resampled to 16 kHz when it differs. */
  sampleRate: number;
  options: TtsOptionSupport;
}

export interface TtsSynthesisOptions {
  /** The catalog's `provider_voice` (`alloy`, `slt`). */
  voice: string;
  /** 1 is normal; the assistant's `speech_speed`. */
  speed?: number;
  /** 0..1, `voice_stability`. */
  stability?: number;
  /** 0..1, `voice_similarity`. */
  similarity?: number;
  /** `tts_emotion_enabled`. */
  emotion?: boolean;
  language?: string;
  /**
   * The call's audio ends at 8 kHz (a G.711 codec): a provider may skip work above 4 kHz. The
   * frames are still 16 kHz, but only their 0-4 kHz band need be right (OpenAI: a shorter
   * resampling filter, see src/audio/resample.ts, whose output carries aliases 9-40 dB down at
   * 5-8 kHz; the 16 kHz call recording keeps them). Callers read it per synthesis from the
   * call's outbound codec, which a re-INVITE may change.
   */
  narrowband?: boolean;
  /**
   * Barge-in aborts this. An aborted synthesis ends quietly (the iterator just finishes, the
   * HTTP request is cancelled): the caller knows it aborted and there is nothing to report.
   */
  signal: AbortSignal;
  /** Time from the synthesize() call to the first frame, for the turn's latency record. */
  onFirstFrame?: (latencyMs: number) => void;
}

export interface TtsProvider {
  readonly label: string;
  readonly capabilities: TtsCapabilities;
  synthesize(text: string, opts: TtsSynthesisOptions): AsyncIterable<AudioFrame>;
}
