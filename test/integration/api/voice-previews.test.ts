import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { OpenAiAudioStandIn, SPEECH_PATH } from '../../support/openai-audio-stand-in.ts';
import { readWav } from '../../../src/audio/wav.ts';
import { testTempDir } from '../../support/temp-dir.ts';

let t: TestApp | undefined;
let standIn: OpenAiAudioStandIn | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await standIn?.close();
  standIn = undefined;
});

const FLITE_SLT = 151; // en-US slot 51
const OPENAI_TTS_ALLOY = 121; // en-US slot 21
const REALTIME_ALLOY = 101; // en-US slot 1

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

async function fetchPreview(app: TestApp, id: number | string) {
  const started = performance.now();
  const res = await app.app.inject({ method: 'GET', url: `/api/voices/${id}/preview.wav` });
  return { res, ms: performance.now() - started };
}

describe('GET /api/voices/:id/preview.wav', () => {
  it('a Flite voice: a 16 kHz mono WAV with speech, without a key; then served from cache', async () => {
    t = await testApp();
    const first = await fetchPreview(t, FLITE_SLT);
    expect(first.res.statusCode).toBe(200);
    expect(first.res.headers['content-type']).toMatch(/^audio\/wav/);
    const wav = readWav(first.res.rawPayload);
    expect(wav.sampleRate).toBe(16_000);
    expect(wav.channels).toBe(1);
    expect(wav.samples.length / wav.sampleRate).toBeGreaterThan(1);
    expect(rms(wav.samples)).toBeGreaterThan(300);

    const second = await fetchPreview(t, FLITE_SLT);
    expect(second.res.statusCode).toBe(200);
    expect(Buffer.compare(second.res.rawPayload, first.res.rawPayload)).toBe(0);
    expect(second.ms).toBeLessThan(first.ms);
  }, 60_000);

  it('unknown voice id: 404 {message}', async () => {
    t = await testApp();
    const { res } = await fetchPreview(t, 999_999);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: expect.any(String) });
  });

  it('an OpenAI TTS or realtime voice without a provider key: 404', async () => {
    t = await testApp({ OPENAI_API_KEY: '' });
    for (const id of [OPENAI_TTS_ALLOY, REALTIME_ALLOY]) {
      const { res } = await fetchPreview(t, id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ message: 'No preview available for this voice without a provider key.' });
    }
  });

  it('a private voice is never served on the keyless URL', async () => {
    const file = path.join(testTempDir('sb-catalog-'), 'catalog.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        add: {
          voices: [{ id: 9001, name: 'Private', language_id: 1, gender: 'female', synthesizer_provider_id: 2, provider_voice: 'slt', modes: ['pipeline'], public: false, account_id: 1 }],
        },
      }),
    );
    t = await testApp({ SWITCHBOARD_CATALOG: file });
    const { res } = await fetchPreview(t, 9001);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: expect.any(String) });
  });

  it('OpenAI TTS and realtime voices with a key: synthesized once through OpenAI speech, then cached', async () => {
    standIn = await OpenAiAudioStandIn.start({ speech: { synth: 'tone' } });
    t = await testApp({ OPENAI_API_KEY: standIn.apiKey, OPENAI_BASE_URL: standIn.baseUrl });
    for (const id of [OPENAI_TTS_ALLOY, REALTIME_ALLOY]) {
      const { res } = await fetchPreview(t, id);
      expect(res.statusCode).toBe(200);
      const wav = readWav(res.rawPayload);
      expect(wav.sampleRate).toBe(16_000);
      expect(wav.channels).toBe(1);
      expect(rms(wav.samples)).toBeGreaterThan(300);
      const again = await fetchPreview(t, id);
      expect(Buffer.compare(again.res.rawPayload, res.rawPayload)).toBe(0);
    }
    const speech = standIn.requestsTo(SPEECH_PATH);
    expect(speech).toHaveLength(2);
    expect(speech.map((r) => r.json?.voice)).toEqual(['alloy', 'alloy']);
  }, 30_000);
});
