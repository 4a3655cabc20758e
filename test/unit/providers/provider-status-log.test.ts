/**
 * Start-up says what will work: one pino line per provider kind, configured vendors and the
 * variable each missing one needs, never a key.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { Catalog } from '../../../src/catalog/catalog.ts';
import { logProviderStatus } from '../../../src/providers/status.ts';
import { createLogger } from '../../../src/util/logger.ts';

const OPENAI_KEY = 'sk-test-startup-0123456789';

function captured(env: Record<string, string>): { level: number; msg: string; providerKind: string; configured: string[]; notConfigured: { provider: string; env: string }[] }[] {
  const lines: string[] = [];
  const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }));
  const config = loadConfig({ SWITCHBOARD_DATA_DIR: '/tmp/switchboard-test-unused', SIP_PUBLIC_HOST: '127.0.0.1', ...env });
  logProviderStatus(logger, config, Catalog.load(config));
  for (const l of lines) expect(l).not.toContain(OPENAI_KEY);
  return lines.map((l) => JSON.parse(l));
}

describe('provider status at start-up', () => {
  it('OpenAI key only: one line per kind; speech-to-text warns that Deepgram needs DEEPGRAM_API_KEY', () => {
    const lines = captured({ OPENAI_API_KEY: OPENAI_KEY });
    expect(lines.map((l) => l.providerKind)).toEqual(['stt', 'llm', 'tts', 'realtime', 'whatsapp']);
    const stt = lines[0]!;
    expect(stt).toMatchObject({ level: 40, configured: ['openai'], notConfigured: [{ provider: 'deepgram', env: 'DEEPGRAM_API_KEY' }] });
    expect(stt.msg).toBe('speech-to-text providers: openai configured; deepgram NOT configured (set DEEPGRAM_API_KEY)');
    expect(lines[1]).toMatchObject({ level: 30, msg: 'language model providers: openai configured', notConfigured: [] });
    expect(lines[2]!.msg).toBe('text-to-speech providers: openai configured; flite configured (offline, bundled)');
    expect(lines[3]!.msg).toBe('realtime (multimodal) providers: openai configured');
    expect(lines[4]!.msg).toBe('WhatsApp messaging providers: twilio configured (credentials per WhatsApp sender)');
  });

  it('no key: every OpenAI kind names OPENAI_API_KEY; Flite still works', () => {
    const lines = captured({});
    expect(lines.find((l) => l.providerKind === 'llm')!.msg).toBe('language model providers: openai NOT configured (set OPENAI_API_KEY)');
    expect(lines.find((l) => l.providerKind === 'tts')).toMatchObject({
      msg: 'text-to-speech providers: flite configured (offline, bundled); openai NOT configured (set OPENAI_API_KEY)',
      configured: ['flite'],
    });
    expect(lines.find((l) => l.providerKind === 'stt')!.notConfigured.map((m) => m.env)).toEqual(['DEEPGRAM_API_KEY', 'OPENAI_API_KEY']);
  });

  it('a custom OPENAI_BASE_URL without a key (a local model server) counts as configured, said so', () => {
    const lines = captured({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(lines.find((l) => l.providerKind === 'llm')!.msg).toBe('language model providers: openai configured (no key, custom OPENAI_BASE_URL)');
  });
});
