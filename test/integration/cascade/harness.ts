/**
 * Fixture replayer setup: a pipeline call on VirtualMedia + ManualClock with in-process stand-in
 * providers (src/replay/stand-ins.ts) and the real Silero VAD.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent } from '../../../src/agent/run-turn.ts';
import { AmbientLibrary } from '../../../src/audio/ambient.ts';
import { SAMPLE_RATE } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { readWav, toMono } from '../../../src/audio/wav.ts';
import { runCascade, type CascadeAssistant, type CascadeDeps, type CascadeResult } from '../../../src/call/cascade/index.ts';
import { VirtualMedia, type CallerItem, type CallerScript } from '../../../src/call/virtual-media.ts';
import { EnergySttProvider, StandInLlm, ToneTtsProvider } from '../../../src/replay/stand-ins.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/audio/', import.meta.url));

export const TRANSCRIPTS: Record<string, string> = {
  'utt-opening-hours': 'What are your opening hours?',
  'utt-book-table': 'I would like to book a table for two people tomorrow evening.',
  'utt-cancel': 'I need to cancel my appointment on Friday.',
  'utt-yes': 'Yes.',
  'utt-no': 'No.',
  'bc-mm-hmm': 'mm-hmm',
  'bc-okay': 'okay',
  'bc-uh-huh': 'uh-huh',
  'bc-yeah': 'yeah',
  'noise-babble': '',
  'noise-street': '',
};

export function fixture(name: string): Int16Array {
  const wav = readWav(readFileSync(`${FIXTURES}${name}.wav`));
  if (wav.sampleRate !== SAMPLE_RATE) throw new Error('fixtures are 16 kHz');
  return toMono(wav);
}

export function say(name: string, atMs: number): CallerItem {
  return { atMs, samples: fixture(name), transcript: TRANSCRIPTS[name] ?? '', label: name };
}

export function durationMs(name: string): number {
  return (fixture(name).length / SAMPLE_RATE) * 1000;
}

let vadPromise: Promise<SileroVad> | undefined;
export function sharedVad(): Promise<SileroVad> {
  return (vadPromise ??= SileroVad.load());
}

export const ambientLibrary = new AmbientLibrary();

export function assistant(config: Partial<CascadeAssistant['config']> = {}): CascadeAssistant {
  return {
    id: 1,
    accountId: 1,
    mode: 'pipeline',
    config: {
      system_prompt: 'You are the front desk of a restaurant.',
      initial_message: 'Hello, thanks for calling Luigi. How can I help?',
      enable_noise_cancellation: false,
      ...config,
    },
  };
}

export interface CallSetup {
  config?: Partial<CascadeAssistant['config']>;
  script: CallerScript;
  llm?: (llm: StandInLlm) => void;
  tts?: ConstructorParameters<typeof ToneTtsProvider>[1];
  maxMs?: number;
  deps?: Partial<CascadeDeps>;
  variables?: Record<string, unknown>;
}

export interface CallRun {
  result: CascadeResult;
  media: VirtualMedia;
  llm: StandInLlm;
  tts: ToneTtsProvider;
  clock: ManualClock;
  events: <T extends CascadeResult['timeline'][number]['type']>(type: T) => Extract<CascadeResult['timeline'][number], { type: T }>[];
}

export async function runCall(setup: CallSetup): Promise<CallRun> {
  const clock = new ManualClock();
  const media = new VirtualMedia(clock, setup.script);
  const llm = new StandInLlm(clock, { content: 'We are open from nine to five, Monday to Friday.' });
  setup.llm?.(llm);
  const tts = new ToneTtsProvider(clock, setup.tts);
  const agent = new Agent({
    resolveModel: () => ({ provider: llm, model: 'stand-in' }),
    customTools: async () => [],
    searchKnowledge: async () => [],
  });
  const deps: CascadeDeps = {
    clock,
    agent,
    voice: { provider: tts, voice: 'tone' },
    stt: new EnergySttProvider((ms) => media.transcriptAt(ms)),
    language: 'en-US',
    vad: await sharedVad(),
    ambient: ambientLibrary,
    work: media.work,
    random: () => 0,
    ...setup.deps,
  };
  const result = await media.drive(
    () => runCascade(media, deps, assistant(setup.config), setup.variables, new AbortController().signal),
    setup.maxMs ?? 120_000,
  );
  const events = ((type: string) => result.timeline.filter((e) => e.type === type)) as CallRun['events'];
  return { result, media, llm, tts, clock, events };
}
