/**
 * What happened in a call, in ms from answer: the replay CLI prints it, tests assert on it, and
 * live calls can log it. Events are facts the engine acted on, not a debug trace.
 */
import type { EndOfTurnReason } from '../turn-taking.ts';
import type { IgnoreReason } from '../interruption.ts';
import type { FillerCategory } from '../fillers.ts';
import type { AssistantTurnKind } from '../transcript.ts';

export type TimelineEvent =
  | { type: 'answer'; atMs: number }
  /** `atMs`: the speech onset (or first silent frame); `detectedAtMs`: when the VAD was sure. */
  | { type: 'vad-speech-start'; atMs: number; detectedAtMs: number }
  | { type: 'vad-speech-end'; atMs: number; detectedAtMs: number }
  | { type: 'stt-final'; atMs: number; text: string }
  | {
      type: 'end-of-turn';
      atMs: number;
      waitedMs: number;
      reason: EndOfTurnReason;
      transcript: string;
      /** False when the turn had no words (noise the VAD took for speech): no reply. */
      taken: boolean;
    }
  | { type: 'overlap'; atMs: number; action: 'duck' | 'pause' | 'resume' }
  | { type: 'interruption'; atMs: number; taken: true; transcript: string; words: number; speechMs: number }
  | { type: 'interruption'; atMs: number; taken: false; reason: IgnoreReason; transcript: string }
  | { type: 'filler'; atMs: number; text: string; category: FillerCategory }
  | { type: 'turn-start'; atMs: number; turn: number; kind: AssistantTurnKind }
  | { type: 'assistant-audio-start'; atMs: number; turn: number; kind: AssistantTurnKind }
  | { type: 'assistant-audio-stop'; atMs: number; turn: number; kind: AssistantTurnKind; interrupted: boolean }
  | { type: 'reengagement'; atMs: number; count: number }
  | { type: 'provider-error'; atMs: number; provider: 'llm' | 'tts' | 'stt'; message: string; retrying: boolean }
  | { type: 'dtmf'; atMs: number; digit: string }
  | { type: 'hang-up'; atMs: number; reason: string };

export type TimelineListener = (event: TimelineEvent) => void;
