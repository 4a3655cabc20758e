import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { billableMinutes, callCostMicros, callLedgerReference } from '../../../src/call/post-call/billing.ts';
import {
  evaluationJsonSchema,
  extractArguments,
  transcriptText,
  validateEvaluation,
  wantsEvaluation,
  evaluationModel,
  type SchemaItem,
} from '../../../src/call/post-call/evaluation.ts';
import { callCompletedData, storableRecordingPath, transcriptView, webhookDecision } from '../../../src/call/post-call/webhook.ts';
import { CALL_PRICE_PER_MINUTE_MICROS } from '../../../src/billing/prices.ts';
import type { AssistantRecord } from '../../../src/store/repos/assistants.ts';
import type { Call } from '../../../src/store/repos/calls.ts';

const T0 = 1_700_000_000_000;

describe('billing per started minute', () => {
  it.each([
    ['unanswered', null, null, 0],
    ['unanswered with an end', null, T0 + 30_000, 0],
    ['answered, hung up at once', T0, T0, 1],
    ['1 s', T0, T0 + 1_000, 1],
    ['59.999 s', T0, T0 + 59_999, 1],
    ['60 s', T0, T0 + 60_000, 1],
    ['60.001 s', T0, T0 + 60_001, 2],
    ['61 s', T0, T0 + 61_000, 2],
    ['120 s', T0, T0 + 120_000, 2],
    ['20 min', T0, T0 + 1_200_000, 20],
  ])('%s → %i minute(s)', (_name, answer, end, minutes) => {
    expect(billableMinutes(answer, end)).toBe(minutes);
    expect(callCostMicros(answer, end)).toBe(minutes * CALL_PRICE_PER_MINUTE_MICROS);
  });

  it('uses a reference per call', () => {
    expect(callLedgerReference('abc')).toBe('call:abc');
  });
});

const items: SchemaItem[] = [
  { name: 'resolved', type: 'bool', description: 'Was the issue resolved?' },
  { name: 'score', type: 'number', description: 'Satisfaction from 1 to 10' },
  { name: 'summary', type: 'string', description: 'One sentence summary' },
];

function assistant(over: Partial<AssistantRecord['config']> = {}, rec: Partial<AssistantRecord> = {}): AssistantRecord {
  return {
    id: 7,
    uuid: 'asst-uuid',
    accountId: 1,
    name: 'Front desk',
    type: 'inbound',
    mode: 'pipeline',
    status: 'active',
    phoneNumberId: null,
    folderId: null,
    inboundWebhookEnabled: true,
    config: {
      post_call_evaluation: true,
      post_call_schema: items,
      is_webhook_active: true,
      webhook_url: 'https://hooks.example.test/calls',
      send_webhook_only_on_completed: true,
      include_recording_in_webhook: true,
      llm_model_id: 2,
      chat_llm_fallback_id: 3,
      ...over,
    } as AssistantRecord['config'],
    createdAt: T0,
    updatedAt: T0,
    ...rec,
  };
}

describe('evaluation schema and validation', () => {
  it('builds a JSON Schema with every field required and nullable', () => {
    expect(evaluationJsonSchema(items)).toEqual({
      type: 'object',
      properties: {
        resolved: { type: ['boolean', 'null'], description: 'Was the issue resolved?' },
        score: { type: ['number', 'null'], description: 'Satisfaction from 1 to 10' },
        summary: { type: ['string', 'null'], description: 'One sentence summary' },
      },
      required: ['resolved', 'score', 'summary'],
      additionalProperties: false,
    });
  });

  it('keeps well-typed values and drops unknown keys', () => {
    expect(validateEvaluation(items, { resolved: false, score: 8.5, summary: 'ok', other: 1 })).toEqual({ resolved: false, score: 8.5, summary: 'ok' });
  });

  it('coerces unambiguous values and nulls the rest', () => {
    expect(validateEvaluation(items, { resolved: 'Yes', score: ' 7 ', summary: 42 })).toEqual({ resolved: true, score: 7, summary: '42' });
    expect(validateEvaluation(items, { resolved: 'maybe', score: 'seven', summary: { a: 1 } })).toEqual({ resolved: null, score: null, summary: null });
    expect(validateEvaluation(items, { resolved: 0, score: '', summary: true })).toEqual({ resolved: false, score: null, summary: 'true' });
    expect(validateEvaluation(items, {})).toEqual({ resolved: null, score: null, summary: null });
    expect(validateEvaluation(items, ['not', 'an', 'object'])).toEqual({ resolved: null, score: null, summary: null });
  });

  it('reads the tool call first, else a JSON object in the text', () => {
    const fromTool = { content: '', finishReason: 'tool_calls', toolCalls: [{ id: 'c', name: 'record_call_evaluation', arguments: '{"score":3}' }] };
    expect(extractArguments(fromTool)).toEqual({ score: 3 });
    expect(extractArguments({ content: 'Here you go:\n```json\n{"score": 4}\n```', toolCalls: [], finishReason: 'stop' })).toEqual({ score: 4 });
    expect(() => extractArguments({ content: 'no idea', toolCalls: [], finishReason: 'stop' })).toThrow(/no evaluation/);
    expect(() => extractArguments({ content: '{score: }', toolCalls: [], finishReason: 'stop' })).toThrow(/not valid JSON/);
  });

  it('is wanted only with the flag on and a non-empty schema', () => {
    expect(wantsEvaluation(assistant())).toBe(true);
    expect(wantsEvaluation(assistant({ post_call_evaluation: false }))).toBe(false);
    expect(wantsEvaluation(assistant({ post_call_schema: [] }))).toBe(false);
    expect(wantsEvaluation(assistant({ post_call_schema: null }))).toBe(false);
    expect(wantsEvaluation(null)).toBe(false);
  });

  it('picks llm_model_id for pipeline, chat_llm_fallback_id for realtime modes', () => {
    const asked: (number | null | undefined)[] = [];
    const deps = { resolveModel: (id: number | null | undefined) => (asked.push(id), undefined) };
    evaluationModel(deps, assistant());
    evaluationModel(deps, assistant({}, { mode: 'multimodal' }));
    evaluationModel(deps, assistant({ chat_llm_fallback_id: null }, { mode: 'dualplex' }));
    evaluationModel(deps, assistant({ llm_model_id: null }));
    expect(asked).toEqual([2, 3, 2, 3]);
  });

  it('renders the transcript in time order, blank turns left out', () => {
    const text = transcriptText({
      turns: [
        { speaker: 'caller', text: 'I need a table', startMs: 3000, endMs: 4000 },
        { speaker: 'assistant', text: 'Hello!', startMs: 0, endMs: 1000 },
        { speaker: 'caller', text: '  ', startMs: 1500, endMs: 1600 },
        { speaker: 'assistant', text: 'For how many', startMs: 4500, endMs: 5000, interrupted: true },
      ],
    });
    expect(text).toBe('Assistant: Hello!\nCaller: I need a table\nAssistant: For how many [interrupted]');
  });
});

describe('webhook decision', () => {
  const completed = { status: 'completed', direction: 'inbound' as const };
  it.each([
    ['sent for a completed call', {}, {}, completed, true],
    ['not active', { is_webhook_active: false }, {}, completed, false],
    ['no url', { webhook_url: null }, {}, completed, false],
    ['no-answer skipped when only completed', {}, {}, { status: 'no-answer', direction: 'outbound' as const }, false],
    ['failed skipped when only completed', {}, {}, { status: 'failed', direction: 'inbound' as const }, false],
    ['canceled skipped when only completed', {}, {}, { status: 'canceled', direction: 'inbound' as const }, false],
    ['busy sent when not only completed', { send_webhook_only_on_completed: false }, {}, { status: 'busy', direction: 'outbound' as const }, true],
    ['inbound webhook disabled', {}, { inboundWebhookEnabled: false }, completed, false],
    ['outbound unaffected by the inbound switch', {}, { inboundWebhookEnabled: false }, { status: 'completed', direction: 'outbound' as const }, true],
  ])('%s', (_name, cfg, rec, call, send) => {
    expect(webhookDecision(assistant(cfg, rec), call).send).toBe(send);
  });

  it('nothing without an assistant', () => {
    expect(webhookDecision(null, completed)).toEqual({ send: false, reason: 'no assistant' });
  });
});

describe('payload pieces', () => {
  it('transcript view is snake_case and time-ordered', () => {
    expect(
      transcriptView({
        turns: [
          { speaker: 'caller', text: 'b', startMs: 20, endMs: 30 },
          { speaker: 'assistant', text: 'a', startMs: 0, endMs: 10, interrupted: true },
        ],
      }),
    ).toEqual([
      { speaker: 'assistant', text: 'a', start_ms: 0, end_ms: 10, interrupted: true },
      { speaker: 'caller', text: 'b', start_ms: 20, end_ms: 30 },
    ]);
    expect(transcriptView(null)).toEqual([]);
  });

  it('call.completed data carries the record with ISO timings, duration and cost', () => {
    const call = {
      id: 5, uuid: 'u-5', accountId: 1, assistantId: 7, direction: 'outbound', sipTrunkId: 2, phoneNumberId: null,
      fromNumber: '+15550001111', toNumber: '+15550002222', status: 'completed', endCause: 'remote-hangup', codec: 'PCMU',
      sipCallId: 'x', inviteAt: T0, answerAt: T0 + 5_000, endAt: T0 + 66_400, quality: null, transcript: null, evaluation: null,
      recordingPath: null, variables: { name: 'Ann' }, campaignId: 3, leadId: 4, costMicros: 200_000, details: null, nodeId: null,
    } satisfies Call;
    const data = callCompletedData({ call, assistant: assistant(), transcript: [], evaluation: { score: 1 }, recordingUrl: null, tapeUrl: null });
    expect(data).toEqual({
      call: {
        id: 5, uuid: 'u-5', direction: 'outbound', from_number: '+15550001111', to_number: '+15550002222', status: 'completed',
        end_cause: 'remote-hangup', started_at: new Date(T0).toISOString(), answered_at: new Date(T0 + 5_000).toISOString(),
        ended_at: new Date(T0 + 66_400).toISOString(), duration_s: 61, billed_minutes: 2, cost: 0.2, cost_micros: 200_000,
        campaign_id: 3, lead_id: 4, variables: { name: 'Ann' },
      },
      assistant: { id: 7, uuid: 'asst-uuid', name: 'Front desk' },
      transcript: [],
      evaluation: { score: 1 },
      recording_url: null,
      tape_url: null,
    });
  });

  it('stores recording paths relative to the data dir, only for files that exist inside it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'post-call-'));
    try {
      fs.mkdirSync(path.join(dir, 'recordings'));
      const file = path.join(dir, 'recordings', 'u.wav');
      fs.writeFileSync(file, 'RIFF');
      expect(storableRecordingPath(dir, file)).toBe(path.join('recordings', 'u.wav'));
      expect(storableRecordingPath(dir, 'recordings/u.wav')).toBe(path.join('recordings', 'u.wav'));
      expect(storableRecordingPath(dir, path.join(dir, 'recordings', 'missing.wav'))).toBeUndefined();
      expect(storableRecordingPath(dir, '/etc/hostname')).toBeUndefined();
      expect(storableRecordingPath(dir, undefined)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
