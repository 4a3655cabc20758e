import { describe, expect, it } from 'vitest';
import { changedFields, parseFormat, sessionObject, textItem, turnDetection } from '../../../src/providers/realtime/openai-session.ts';
import type { RealtimeSessionConfig } from '../../../src/providers/realtime/realtime.ts';

const full: RealtimeSessionConfig = {
  instructions: 'Be brief.',
  voice: 'marin',
  inputFormat: 'pcmu',
  outputFormat: 'pcm24k',
  outputModalities: 'audio',
  turnDetection: { type: 'server_vad', threshold: 0.7, silenceMs: 650, prefixPaddingMs: 250 },
  tools: [{ name: 'lookup', description: 'Find an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } }],
  temperature: 0.9,
  inputTranscription: { model: 'gpt-4o-transcribe' },
};

describe('OpenAI realtime session mapping', () => {
  it('builds the GA session object: nested audio, MIME formats, output_modalities, no temperature', () => {
    expect(sessionObject(full, 'ga')).toEqual({
      type: 'realtime',
      instructions: 'Be brief.',
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          turn_detection: { type: 'server_vad', threshold: 0.7, silence_duration_ms: 650, prefix_padding_ms: 250 },
          transcription: { model: 'gpt-4o-transcribe' },
        },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' },
      },
      tools: [{ type: 'function', name: 'lookup', description: 'Find an order', parameters: full.tools![0]!.parameters }],
      tool_choice: 'auto',
    });
  });

  it('builds the beta session object: flat fields, pcm16/g711 names, clamped temperature', () => {
    const s = sessionObject({ ...full, outputModalities: 'text', temperature: 2 }, 'beta');
    expect(s).toMatchObject({
      modalities: ['text'],
      input_audio_format: 'g711_ulaw',
      output_audio_format: 'pcm16',
      voice: 'marin',
      input_audio_transcription: { model: 'gpt-4o-transcribe' },
      temperature: 1.2,
    });
    expect(s).not.toHaveProperty('type');
  });

  it('maps turn detection: threshold clamped, semantic, null turns it off, absent leaves the default', () => {
    expect(turnDetection({ type: 'server_vad', threshold: 1.7 })).toEqual({ type: 'server_vad', threshold: 1 });
    expect(turnDetection({ type: 'server_vad', createResponse: false, interruptResponse: false })).toEqual({
      type: 'server_vad',
      create_response: false,
      interrupt_response: false,
    });
    expect(turnDetection('semantic')).toEqual({ type: 'semantic_vad' });
    expect(turnDetection(null)).toBeNull();
    expect(sessionObject({ turnDetection: null }, 'ga')).toEqual({ type: 'realtime', audio: { input: { turn_detection: null } } });
    expect(sessionObject({ instructions: 'x' }, 'ga')).toEqual({ type: 'realtime', instructions: 'x' });
  });

  it('reads formats back from either dialect', () => {
    expect(parseFormat({ type: 'audio/pcm', rate: 24000 })).toBe('pcm24k');
    expect(parseFormat('g711_ulaw')).toBe('pcmu');
    expect(parseFormat({ type: 'audio/pcma' })).toBe('pcma');
    expect(parseFormat('opus')).toBeUndefined();
  });

  it('sends only what changed, keeping formats next to other audio changes', () => {
    expect(changedFields(full, { instructions: 'Be brief.', voice: 'marin' })).toEqual({});
    expect(changedFields(full, { instructions: 'New.' })).toEqual({ instructions: 'New.' });
    expect(changedFields(full, { turnDetection: 'semantic' })).toEqual({ turnDetection: 'semantic', inputFormat: 'pcmu' });
  });

  it('re-seeds text items with each dialect’s content types', () => {
    expect(textItem('user', 'hi', 'ga')).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] });
    expect(textItem('assistant', 'yo', 'ga').content).toEqual([{ type: 'output_text', text: 'yo' }]);
    expect(textItem('assistant', 'yo', 'beta').content).toEqual([{ type: 'text', text: 'yo' }]);
  });
});
