/**
 * The latency waterfall's model: per reply, where its time went from the moment the caller
 * stopped speaking to the first frame of the reply on the wire, from the latency parts the
 * transcript records (src/call/transcript.ts). Bars are in ms from the end of the caller's speech.
 *
 * Recorded: end of speech → end-of-turn decision (endpointing), → last STT final, decision → LLM
 * first token, TTS request → first audio, decision → first reply frame out, and the total.
 * Not recorded: when the first sentence went to TTS (so the TTS bar is placed to end where the
 * first frame went out: its start is approximate) and the RTP send time of that frame (the frame
 * written to the outbound media stands for it; pacing sends it within 20 ms).
 */
import type { TranscriptLine, TurnLatencyView } from '../types.ts';

export type WaterfallKey = 'endpointing' | 'stt' | 'llm' | 'tts' | 'first-frame' | 'total';

export interface WaterfallBar {
  key: WaterfallKey;
  label: string;
  startMs: number;
  endMs: number;
  /** The bar's start is placed, not measured. */
  approximate?: boolean;
}

export interface WaterfallTurn {
  /** 1-based among the replies with latency. */
  index: number;
  /** End of the caller's speech, ms from answer. */
  atMs: number;
  caller: string;
  reply: string;
  bars: WaterfallBar[];
  totalMs: number | undefined;
  /** Parts the transcript did not record for this turn. */
  missing: WaterfallKey[];
}

export interface WaterfallModel {
  turns: WaterfallTurn[];
  /** The longest bar end of all turns: one scale for every turn. */
  maxMs: number;
}

export const WATERFALL_LABELS: Record<WaterfallKey, string> = {
  endpointing: 'End of speech → end-of-turn decision',
  stt: 'End of speech → STT final',
  llm: 'Decision → LLM first token',
  tts: 'TTS request → first audio',
  'first-frame': 'Decision → first reply frame out',
  total: 'End of speech → first reply frame out',
};

const KEYS: Array<[WaterfallKey, keyof TurnLatencyView]> = [
  ['endpointing', 'endpointing_ms'],
  ['stt', 'stt_final_ms'],
  ['llm', 'llm_first_token_ms'],
  ['tts', 'tts_first_audio_ms'],
  ['first-frame', 'first_frame_out_ms'],
  ['total', 'total_ms'],
];

function turnBars(l: TurnLatencyView): { bars: WaterfallBar[]; missing: WaterfallKey[] } {
  const bars: WaterfallBar[] = [];
  const missing = KEYS.filter(([, k]) => typeof l[k] !== 'number').map(([key]) => key);
  const decision = l.endpointing_ms;
  const bar = (key: WaterfallKey, startMs: number, endMs: number, approximate = false) =>
    bars.push({ key, label: WATERFALL_LABELS[key], startMs, endMs: Math.max(startMs, endMs), ...(approximate ? { approximate } : {}) });
  if (decision !== undefined) bar('endpointing', 0, decision);
  if (l.stt_final_ms !== undefined) bar('stt', 0, l.stt_final_ms);
  if (decision !== undefined && l.llm_first_token_ms !== undefined) bar('llm', decision, decision + l.llm_first_token_ms);
  const frameAt = decision !== undefined && l.first_frame_out_ms !== undefined ? decision + l.first_frame_out_ms : l.total_ms;
  if (l.tts_first_audio_ms !== undefined && frameAt !== undefined) {
    const earliest = decision !== undefined ? decision + (l.llm_first_token_ms ?? 0) : 0;
    bar('tts', Math.max(earliest, frameAt - l.tts_first_audio_ms), frameAt, true);
  }
  if (decision !== undefined && l.first_frame_out_ms !== undefined) bar('first-frame', decision, decision + l.first_frame_out_ms);
  if (l.total_ms !== undefined) bar('total', 0, l.total_ms);
  return { bars, missing };
}

/** `zeroMs`: where the transcript's zero is on the recording (the tape's first engine run). */
export function buildWaterfall(transcript: readonly TranscriptLine[], zeroMs = 0): WaterfallModel {
  const turns: WaterfallTurn[] = [];
  let lastCaller: TranscriptLine | undefined;
  for (const line of transcript) {
    if (line.speaker === 'caller') {
      lastCaller = line;
      continue;
    }
    if (!line.latency) continue;
    const { bars, missing } = turnBars(line.latency);
    if (bars.length === 0) continue;
    const total = line.latency.total_ms;
    const endOfSpeech = total !== undefined ? line.start_ms - total : (lastCaller?.end_ms ?? line.start_ms);
    turns.push({
      index: turns.length + 1,
      atMs: endOfSpeech + zeroMs,
      caller: lastCaller?.text ?? '',
      reply: line.text,
      bars,
      totalMs: total,
      missing,
    });
  }
  const maxMs = Math.max(1, ...turns.flatMap((t) => t.bars.map((b) => b.endMs)));
  return { turns, maxMs };
}
