/**
 * `switchboard serve` as an operator runs it: its log names, per kind of provider, what is
 * configured and which variable is missing, and never prints a key.
 */
import { afterEach, expect, it } from 'vitest';
import { EngineProcess } from '../../support/engine-process.ts';
import { testTempDir } from '../../support/temp-dir.ts';

const OPENAI_KEY = 'sk-test-serve-SECRET-0123456789';
let engine: EngineProcess | undefined;
afterEach(async () => {
  await engine?.stop('SIGTERM');
});

it('serve logs one provider line per kind, naming DEEPGRAM_API_KEY as missing, and no key', async () => {
  const dir = testTempDir('provider-lines');
  engine = await EngineProcess.start(dir, { LOG_LEVEL: 'info', OPENAI_API_KEY: OPENAI_KEY, DEEPGRAM_API_KEY: '', OPENAI_BASE_URL: '' });
  const lines = engine.output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; providerKind?: string; level: number });
  const providerLines = lines.filter((l) => l.providerKind !== undefined);
  expect(providerLines.map((l) => l.providerKind)).toEqual(['stt', 'llm', 'tts', 'realtime', 'whatsapp']);
  expect(providerLines[0]).toMatchObject({ level: 40, msg: 'speech-to-text providers: openai configured; deepgram NOT configured (set DEEPGRAM_API_KEY)' });
  expect(providerLines[1]!.msg).toBe('language model providers: openai configured');
  expect(engine.output).not.toContain(OPENAI_KEY);
}, 90_000);
