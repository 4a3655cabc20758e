/**
 * `switchboard replay --assistant FILE.json --caller AUDIO.wav [--tape CALL.json] [--stand-ins]`:
 * a caller's recorded audio through a real pipeline session (real Silero VAD, denoiser, turn
 * taking, rules) on a virtual clock, printing the timeline in ms from answer.
 *
 * Time: the clock advances 20 ms per frame whenever the engine is idle (src/call/virtual-media.ts),
 * so a replay runs much faster than real time and, with stand-ins, gives the same timeline on
 * every run. Real work (VAD, Flite, network providers) takes zero virtual time.
 *
 * Providers: `--stand-ins` uses in-process fakes (src/replay/stand-ins.ts): an LLM answering a
 * fixed text, an energy-based STT that "hears" the fixture's transcript (read from the README.md
 * beside the WAV, as in fixtures/audio/) or a fixed sentence, and Flite for real synthesized
 * speech. Without it, the providers come from the environment (OPENAI_*, DEEPGRAM_*) and the
 * catalog, as in `serve`; network STT is not paced to the virtual clock, so transcript times
 * then depend on the vendor's speed.
 *
 * The tape (`--tape`) is one of two things, told apart by its `kind`:
 * - a script (no `kind`) that adds to the caller's side: `{"audio": [{"atMs", "file",
 *   "transcript"?}], "dtmf": [{"atMs", "digit"}], "hangUpAtMs"}`; files are relative to it;
 * - a recorded call tape (`"kind": "switchboard-call-tape"`, what `record` keeps; docs/CALL-TAPE.md):
 *   the caller is then the recorded inbound RTP, fed by arrival time through the production
 *   inbound media chain (tape-replay.ts), and hangs up when the recorded call ended. Times are
 *   then from where the live call's first engine run began, as in its transcript. `--caller` is
 *   optional then (a WAV given is mixed over it). With stand-ins the STT hears the stand-in
 *   caller sentence in the tape's speech.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Agent } from '../agent/run-turn.ts';
import type { AgentDeps } from '../agent/types.ts';
import { AmbientLibrary } from '../audio/ambient.ts';
import { loadDenoiser } from '../audio/denoise.ts';
import { SAMPLE_RATE } from '../audio/frame.ts';
import { resample } from '../audio/resample.ts';
import { FliteTts } from '../audio/tts-flite.ts';
import { SileroVad } from '../audio/vad/silero.ts';
import { readWav, toMono } from '../audio/wav.ts';
import { runCascade, type CascadeAssistant, type CascadeDeps, type TimelineEvent } from '../call/cascade/index.ts';
import { trackedLlm, trackedTts, type WorkTracker } from '../call/cascade/work.ts';
import { resolveSpeech } from '../call/engine.ts';
import type { TranscriptEntry } from '../call/transcript.ts';
import { isCallTape, parseCallTape } from '../call/tape.ts';
import { VirtualMedia, type CallerItem, type CallerScript } from '../call/virtual-media.ts';
import { FliteTtsProvider } from '../providers/tts/flite-tts.ts';
import { ManualClock, type Clock } from '../util/clock.ts';
import { EnergySttProvider, StandInLlm } from './stand-ins.ts';
import { TapeFeed } from './tape-replay.ts';

export const STAND_IN_REPLY = 'Thank you for your question. This is the stand-in assistant, and I am happy to help.';
export const STAND_IN_CALLER_TEXT = 'Hello, I have a question.';
/** After the caller's audio ends, the call stays up this long for the assistant to answer. */
const TAIL_MS = 10_000;

export interface ReplayArgs {
  assistant: string;
  /** Optional with a recorded call tape. */
  caller?: string | undefined;
  tape?: string | undefined;
  standIns: boolean;
}

/** The arguments cannot make a replay (the CLI reports it as a usage error). */
export class ReplayUsageError extends Error {}

export interface ReplayOutput {
  assistant: string;
  caller: string | null;
  /** The tape given, and what it was: a script, or a recorded call (with its call's uuid). */
  tape:
    | { file: string; kind: 'script' }
    /** `zero_ms`: where on the tape the replay's 0 is (the live call's first engine run, the zero of its transcript). */
    | { file: string; kind: 'call-tape'; call_uuid: string; packets: number; truncated: boolean; zero_ms: number }
    | null;
  stand_ins: boolean;
  call_ms: number;
  wall_ms: number;
  speedup: number;
  ended_by: string;
  timeline: TimelineEvent[];
  transcript: TranscriptEntry[];
}

interface Tape {
  audio?: { atMs: number; file: string; transcript?: string }[];
  dtmf?: { atMs: number; digit: string }[];
  hangUpAtMs?: number;
}

export async function runReplay(args: ReplayArgs): Promise<ReplayOutput> {
  const assistant = toAssistant(JSON.parse(await readFile(args.assistant, 'utf8')) as unknown);
  const items: CallerItem[] = args.caller ? [await callerItem(args.caller, 0)] : [];
  let tape: Tape = {};
  const clock = new ManualClock(0);
  let feed: TapeFeed | undefined;
  // The feed's DTMF goes to the call, which exists once the script (with the feed) is built.
  const caller: { media?: VirtualMedia } = {};
  if (args.tape) {
    const json = JSON.parse(await readFile(args.tape, 'utf8')) as unknown;
    const kind = (json as { kind?: unknown } | null)?.kind;
    if (isCallTape(json)) {
      feed = new TapeFeed(parseCallTape(json), clock, clock.now(), { dtmf: (digit, durationMs) => caller.media?.dtmf(digit, durationMs) });
    } else if (kind !== undefined) {
      throw new ReplayUsageError(`--tape: unknown kind ${JSON.stringify(kind)} (a script has no kind; a recorded call tape is "switchboard-call-tape")`);
    } else {
      tape = json as Tape;
      for (const a of tape.audio ?? []) items.push(await callerItem(resolve(dirname(args.tape), a.file), a.atMs, a.transcript));
    }
  }
  if (!feed && !args.caller) throw new ReplayUsageError('--caller is required unless --tape is a recorded call tape');
  const audioEndMs = Math.max(0, ...items.map((i) => i.atMs + (i.samples.length / SAMPLE_RATE) * 1000));
  const script: CallerScript = feed
    ? { items, source: feed, hangUpAtMs: Math.ceil(feed.endMs), codec: feed.tape.media[0]?.codec }
    : { items, dtmf: tape.dtmf ?? [], hangUpAtMs: tape.hangUpAtMs ?? Math.ceil(audioEndMs + TAIL_MS) };
  const media = new VirtualMedia(clock, script);
  caller.media = media;
  const vad = await SileroVad.load();
  const flite = await FliteTts.load();
  // Compile the 21 MB module before the clock starts, so speed figures measure the call.
  await flite.warmUp();
  try {
    // The stand-in STT hears each item's transcript; a recorded tape's speech is the stand-in caller's sentence.
    const heard = (ms: number): string => {
      const item = itemAt(items, ms);
      return item ? (item.transcript ?? '') : feed ? STAND_IN_CALLER_TEXT : '';
    };
    const providers = args.standIns ? standInProviders(clock, media, flite, heard) : await envProviders(assistant, clock, media.work);
    const fallback = { provider: trackedTts(new FliteTtsProvider(() => Promise.resolve(flite), clock), media.work), voice: 'slt' };
    const deps: CascadeDeps = {
      clock,
      ...providers,
      fallbackVoice: fallback,
      vad,
      ambient: new AmbientLibrary(),
      work: media.work,
      random: () => 0,
    };
    // The denoiser `serve` uses (loadDenoiser's default backend), so a replay hears what a call would.
    if (assistant.config.enable_noise_cancellation ?? true) deps.denoiser = await loadDenoiser();
    const started = performance.now();
    const result = await media.drive(() => runCascade(media, deps, assistant, undefined, new AbortController().signal));
    const wallMs = Math.round(performance.now() - started);
    const callMs = media.closedAtMs ?? media.nowMs;
    const t = feed?.tape;
    return {
      assistant: args.assistant,
      caller: args.caller ?? null,
      tape: !args.tape
        ? null
        : t
          ? { file: args.tape, kind: 'call-tape', call_uuid: t.call.uuid, packets: t.packets.length, truncated: t.truncated, zero_ms: feed!.zeroMs }
          : { file: args.tape, kind: 'script' },
      stand_ins: args.standIns,
      call_ms: callMs,
      wall_ms: wallMs,
      speedup: Math.round((callMs / Math.max(1, wallMs)) * 10) / 10,
      ended_by: result.endedBy,
      // Emitted in decision order; printed in time order (a VAD onset is known 60 ms after it).
      timeline: [...result.timeline].sort((a, b) => a.atMs - b.atMs),
      transcript: result.transcript,
    };
  } finally {
    feed?.close();
    await vad.close();
    await flite.close();
  }
}

/** The script item playing at `audioMs`, if any. */
function itemAt(items: readonly CallerItem[], audioMs: number): CallerItem | undefined {
  return items.find((i) => audioMs >= i.atMs && audioMs < i.atMs + (i.samples.length / SAMPLE_RATE) * 1000);
}

/** An assistant file is the API's assistant fields, or a record with them under `config`. */
export function toAssistant(json: unknown): CascadeAssistant {
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('the assistant file must hold a JSON object');
  const o = json as Record<string, unknown>;
  const config = (o.config && typeof o.config === 'object' ? o.config : o) as CascadeAssistant['config'];
  return {
    id: typeof o.id === 'number' ? o.id : 0,
    accountId: typeof o.accountId === 'number' ? o.accountId : 0,
    mode: typeof config.mode === 'string' ? config.mode : 'pipeline',
    config,
  };
}

async function callerItem(path: string, atMs: number, transcript?: string): Promise<CallerItem> {
  const wav = readWav(await readFile(path));
  const mono = toMono(wav);
  const samples = wav.sampleRate === SAMPLE_RATE ? mono : resample(mono, wav.sampleRate, SAMPLE_RATE);
  return { atMs, samples, transcript: transcript ?? (await knownTranscript(path)) ?? STAND_IN_CALLER_TEXT, label: basename(path) };
}

/** The transcript column for this file in a README.md beside it (fixtures/audio/ has one). */
export async function knownTranscript(wavPath: string): Promise<string | undefined> {
  let readme: string;
  try {
    readme = await readFile(join(dirname(wavPath), 'README.md'), 'utf8');
  } catch {
    return undefined;
  }
  const name = basename(wavPath);
  for (const line of readme.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells[1] !== name) continue;
    const text = cells[cells.length - 2] ?? '';
    // "—" marks noise: a stand-in STT hears no words in it.
    return /^—/.test(text) || /unintelligible/.test(text) ? '' : text.replace(/\s*\(.*\)\s*$/, '');
  }
  return undefined;
}

function standInProviders(
  clock: Clock,
  media: VirtualMedia,
  flite: FliteTts,
  heard: (audioMs: number) => string,
): Pick<CascadeDeps, 'agent' | 'voice' | 'stt' | 'language'> {
  const llm = new StandInLlm(clock, { content: STAND_IN_REPLY });
  const deps: AgentDeps = {
    resolveModel: () => ({ provider: llm, model: 'stand-in' }),
    customTools: async () => [],
    searchKnowledge: async () => [],
  };
  return {
    agent: new Agent(deps),
    voice: { provider: trackedTts(new FliteTtsProvider(() => Promise.resolve(flite), clock), media.work), voice: 'slt' },
    stt: new EnergySttProvider(heard),
    language: 'en-US',
  };
}

/** The providers `serve` would use, from the environment and catalog. No store: custom tools and knowledge bases are off. */
async function envProviders(assistant: CascadeAssistant, clock: Clock, work: WorkTracker): Promise<Pick<CascadeDeps, 'agent' | 'voice' | 'stt' | 'language'>> {
  const { loadConfig } = await import('../config.ts');
  const { Catalog } = await import('../catalog/catalog.ts');
  const { SpeechProviders } = await import('../providers/registry.ts');
  const { createLlmRegistry, providerFor } = await import('../providers/llm/registry.ts');
  const config = loadConfig();
  const catalog = Catalog.load(config);
  const llm = createLlmRegistry(config);
  const c = assistant.config;
  if (c.voice_id === undefined || c.language_id === undefined) throw new Error('the assistant needs voice_id and language_id (or use --stand-ins)');
  const speech = resolveSpeech({ id: assistant.id, accountId: assistant.accountId, config: c as Parameters<typeof resolveSpeech>[0]['config'] }, {
    catalog,
    speech: new SpeechProviders({ config, clock }),
  });
  const resolveModel: AgentDeps['resolveModel'] = (id) => {
    const m = catalog.llmModel(id ?? 1) ?? catalog.llmModels()[0];
    const provider = m && providerFor(llm, m.provider);
    return m && provider ? { provider: trackedLlm(provider, work), model: m.model } : undefined;
  };
  return {
    ...speech,
    voice: { ...speech.voice, provider: trackedTts(speech.voice.provider, work) },
    agent: new Agent({ resolveModel, customTools: async () => [], searchKnowledge: async () => [] }),
  };
}
