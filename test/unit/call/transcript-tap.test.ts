// Call control's STT taps (voicemail detection, the supervisor's leg) hear a G.711 line at
// 8 kHz, as the cascade's own stream does: the stream opens at 8000 Hz and gets the frames' own
// 8 kHz samples (other frames decimated); a wideband leg stays at 16 kHz.
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { NarrowbandFrame } from '../../../src/audio/narrowband-frame.ts';
import { TranscriptTap } from '../../../src/call/control/transcriber.ts';
import { EventQueue } from '../../../src/providers/stt/event-queue.ts';
import type { SttEvent, SttOpenOptions, SttProvider, SttStream } from '../../../src/providers/stt/types.ts';

function recordingProvider() {
  const opened: SttOpenOptions[] = [];
  const written: AudioFrame[] = [];
  const provider: SttProvider = {
    label: 'test',
    capabilities: { interim: true, streaming: true },
    open(opts): SttStream {
      opened.push(opts);
      const events = new EventQueue<SttEvent>();
      opts.signal.addEventListener('abort', () => events.end(), { once: true });
      return {
        write: (f) => void written.push(f),
        finalize: () => {},
        close: async () => events.end(),
        [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](),
      };
    },
  };
  return { provider, opened, written };
}

const hooks = { onText: () => {}, onError: () => {} };

describe('TranscriptTap on a G.711 leg', () => {
  it('opens at 8 kHz and writes the frames’ own 8 kHz samples; other frames decimated', async () => {
    const { provider, opened, written } = recordingProvider();
    const tap = new TranscriptTap({ provider, language: 'en-US' }, hooks, true);
    const narrow = new Int16Array(160).fill(1000);
    tap.write(new NarrowbandFrame(narrow));
    tap.write({ samples: new Int16Array(320).fill(500), sampleRate: 16_000 });
    await tap.close();
    expect(opened[0]!.sampleRate).toBe(8000);
    expect(written[0]).toEqual({ samples: narrow, sampleRate: 8000 });
    expect(written[0]!.samples).toBe(narrow);
    expect(written[1]!.sampleRate).toBe(8000);
    expect(written[1]!.samples.length).toBe(160);
  });

  it('a wideband leg stays at 16 kHz', async () => {
    const { provider, opened, written } = recordingProvider();
    const tap = new TranscriptTap({ provider, language: 'en-US' }, hooks);
    const frame = new NarrowbandFrame(new Int16Array(160));
    tap.write(frame);
    await tap.close();
    expect(opened[0]!.sampleRate).toBe(16_000);
    expect(written[0]).toBe(frame);
  });
});
