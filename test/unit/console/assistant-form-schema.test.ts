import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSchema, updateSchema } from '../../../src/assistants/fields.ts';
import { documentedShape } from '../../../src/assistants/field-docs.ts';
import {
  buildBody,
  describeFields,
  errorsByField,
  forMode,
  initialValues,
  requestBodySchema,
  toolsForEditing,
  type FieldDescriptor,
  type JsonSchema,
} from '../../../console/src/schema-form/form-schema.ts';

/**
 * The console's assistant form is generated from the API document's body schema. These tests feed
 * it the schema the engine really publishes (the same zod shapes and JSON Schema rendering as
 * /api/openapi.json), so a field added to the API shows up in the form without console changes.
 */

const asJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
const createBody = asJson(z.object(documentedShape(createSchema.shape, true)));
const updateBody = asJson(z.object(documentedShape(updateSchema.shape, false)));
const byName = (fields: FieldDescriptor[]) => Object.fromEntries(fields.map((f) => [f.name, f]));

describe('describeFields (schema → field descriptors)', () => {
  const fields = describeFields(createBody);
  const f = byName(fields);

  it('covers every field of the create body, each once', () => {
    expect(fields.map((x) => x.name).sort()).toEqual(Object.keys(createBody.properties!).sort());
  });

  it('reads required, enums, bounds, lengths, descriptions and defaults from the schema', () => {
    expect(f.name).toMatchObject({ kind: 'text', required: true, minLength: 1, maxLength: 255, group: 'Basics' });
    expect(f.system_prompt).toMatchObject({ kind: 'textarea', required: true });
    expect(f.mode).toMatchObject({ kind: 'choice', options: ['pipeline', 'multimodal', 'dualplex'], required: true });
    expect(f.max_duration).toMatchObject({ kind: 'integer', min: 20, max: 1200, step: '1', default: 600, required: false });
    expect(f.max_duration!.hint).toBe('Seconds. 20 to 1200. Default: 600.');
    expect(f.speech_speed).toMatchObject({ kind: 'number', min: 0.7, max: 1.2, step: 'any' });
    expect(f.allow_interruptions).toMatchObject({ kind: 'boolean', default: true });
    expect(f.allow_interruptions!.hint).toContain('Default: on.');
    expect(f.webhook_url).toMatchObject({ kind: 'url', nullable: true, maxLength: 2000 });
    expect(f.ambient_sound).toMatchObject({ kind: 'choice', nullable: true });
    expect(f.ambient_sound!.options).toContain('cafe');
    expect(f.tools).toMatchObject({ kind: 'json', maxItems: 50 });
    expect(f.initial_message!.hint).toMatch(/First thing spoken/);
  });

  it('turns id fields into pickers fed by the catalog endpoints, without the "any safe integer" bounds', () => {
    expect(f.voice_id).toMatchObject({ kind: 'reference', source: 'voices', required: true });
    expect(f.voice_id!.max).toBeUndefined();
    expect(f.llm_model_id).toMatchObject({ kind: 'reference', source: 'llm-models', nullable: true, required: false });
    expect(f.tool_ids).toMatchObject({ kind: 'references', source: 'tools', maxItems: 100 });
    expect(f.knowledgebase_id).toMatchObject({ kind: 'reference', source: 'knowledge-bases' });
    expect(f.secondary_language_ids).toMatchObject({ kind: 'references', source: 'languages' });
  });

  it('orders fields by section, Basics first', () => {
    expect(fields.slice(0, 3).map((x) => x.name)).toEqual(['name', 'type', 'mode']);
    expect(fields.findIndex((x) => x.name === 'webhook_url')).toBeGreaterThan(fields.findIndex((x) => x.name === 'max_duration'));
  });

  it('a field the tables do not know still gets a form input from its type', () => {
    const extra = describeFields({ type: 'object', properties: { brand_new: { type: 'integer', minimum: 1, maximum: 9 }, blob: { type: 'object' } } });
    expect(extra[0]).toMatchObject({ name: 'brand_new', label: 'Brand new', kind: 'integer', group: 'Other', min: 1, max: 9 });
    expect(extra[1]).toMatchObject({ kind: 'json' });
  });

  it('the update body has nothing required and no defaults (absent fields are kept)', () => {
    const u = byName(describeFields(updateBody));
    expect(Object.values(u).some((x) => x.required)).toBe(false);
    expect(u.max_duration!.default).toBeUndefined();
  });
});

describe('forMode (the API’s mode rules)', () => {
  const fields = describeFields(createBody);
  it('pipeline: LLM model required, realtime model hidden, knowledge base mode offers prompt', () => {
    const p = byName(forMode(fields, 'pipeline'));
    expect(p.llm_model_id!.required).toBe(true);
    expect(p.multimodal_model_id).toBeUndefined();
    expect(p.turn_detection_threshold).toBeUndefined();
    expect(p.fillers).toBeDefined();
    expect(p.knowledgebase_mode!.options).toEqual(['function_call', 'prompt']);
  });
  it('multimodal and dualplex: realtime model required; no LLM model, fillers, transcriber, interruption switch or prompt knowledge', () => {
    for (const mode of ['multimodal', 'dualplex'] as const) {
      const m = byName(forMode(fields, mode));
      expect(m.multimodal_model_id!.required).toBe(true);
      for (const hidden of ['llm_model_id', 'fillers', 'filler_config', 'transcriber_provider_id', 'allow_interruptions']) expect(m[hidden]).toBeUndefined();
      expect(m.knowledgebase_mode!.options).toEqual(['function_call']);
    }
  });
});

describe('initialValues and buildBody', () => {
  const fields = forMode(describeFields(createBody), 'pipeline');

  it('a new form starts from the schema defaults; empty inputs are left out so the API applies its defaults', () => {
    const v = initialValues(fields);
    expect(v.max_duration).toBe('600');
    expect(v.allow_interruptions).toBe(true);
    expect(v.record).toBe(false);
    expect(v.type).toBe('inbound');
    expect(v.mode).toBe('pipeline');
    expect(v.tool_ids).toEqual([]);
    const { body, errors } = buildBody(fields, { ...v, name: 'Desk', voice_id: '3', language_id: '1', llm_model_id: '2', timezone: 'Europe/Paris', system_prompt: 'Be kind.', max_duration: '', tool_ids: [4, 5] }, { update: false });
    expect(errors).toEqual({});
    expect(body).toMatchObject({ name: 'Desk', voice_id: 3, language_id: 1, llm_model_id: 2, type: 'inbound', mode: 'pipeline', initial_message: '', allow_interruptions: true, tool_ids: [4, 5] });
    expect(body).not.toHaveProperty('max_duration');
    expect(body).not.toHaveProperty('webhook_url');
    expect(body).not.toHaveProperty('tools');
    expect(body.speech_speed).toBe(1);
  });

  it('on update an emptied nullable field is sent as null (cleared)', () => {
    const u = forMode(describeFields(updateBody), 'pipeline');
    const v = initialValues(u, { name: 'Desk', webhook_url: 'https://x.example/h', max_initial_silence_duration: 10, tools: [] });
    expect(v.webhook_url).toBe('https://x.example/h');
    const { body } = buildBody(u, { ...v, webhook_url: '', max_initial_silence_duration: '' }, { update: true });
    expect(body.webhook_url).toBeNull();
    expect(body.max_initial_silence_duration).toBeNull();
    expect(body.tools).toEqual([]);
  });

  it('inputs that are not their type are reported before sending', () => {
    const { errors } = buildBody(fields, { ...initialValues(fields), max_duration: '1.5', tools: '[{', voice_stability: 'x' }, { update: false });
    expect(Object.keys(errors).sort()).toEqual(['max_duration', 'tools', 'voice_stability']);
    expect(errors.tools).toEqual(['The built-in tools must be valid JSON.']);
  });

  it('stored built-in tools are edited as sent ({type, ...fields}); a masked calendar key is asked for again', () => {
    expect(toolsForEditing([{ type: 'end_call', data: { description: 'bye' } }, { type: 'calendar_booking', data: { calendar_api_key: '••••1234', calendar_event_slug: 'x' } }])).toEqual([
      { type: 'end_call', description: 'bye' },
      { type: 'calendar_booking', calendar_event_slug: 'x', calendar_api_key: '' },
    ]);
  });
});

describe('errorsByField', () => {
  it('puts the API’s 422 messages beside the field they name; nested keys go to their top field; unknown ones to the summary', () => {
    const fields = describeFields(createBody);
    expect(errorsByField({ timezone: ['bad zone'], 'tools.0.phone_number': ['required'], nope: ['unknown field'] }, fields)).toEqual({
      timezone: ['bad zone'],
      tools: ['required'],
      '': ['unknown field'],
    });
  });
});

describe('requestBodySchema', () => {
  it('finds an operation’s JSON body schema in an OpenAPI document', () => {
    const doc = { paths: { '/user/assistant': { post: { requestBody: { content: { 'application/json': { schema: createBody } } } } } } };
    expect(requestBodySchema(doc, '/user/assistant', 'post')).toBe(createBody);
    expect(requestBodySchema(doc, '/user/assistant/{id}', 'put')).toBeUndefined();
  });
});

describe('the other generated forms (SIP trunks, caller-ID numbers, campaigns)', () => {
  it('a password is a secret input, a string array a one-per-line list, a constant no input; schema order kept', () => {
    const trunk = describeFields(
      {
        type: 'object',
        required: ['sip_trunk_type', 'sip_password'],
        properties: {
          sip_trunk_type: { type: 'string', enum: ['extension', 'number'] },
          sip_password: { type: 'string', minLength: 3, maxLength: 256 },
          allowed_inbound_ips: { anyOf: [{ type: 'array', maxItems: 100, items: { type: 'string' } }, { type: 'null' }] },
          type: { type: 'string', const: 'caller_id', default: 'caller_id' },
          assistant_id: { type: 'integer', exclusiveMinimum: 0 },
        },
      },
      { order: 'schema' },
    );
    expect(trunk.map((f) => [f.name, f.kind, f.label])).toEqual([
      ['sip_trunk_type', 'choice', 'SIP trunk type'],
      ['sip_password', 'secret', 'SIP password'],
      ['allowed_inbound_ips', 'list', 'Allowed inbound IPs'],
      ['assistant_id', 'reference', 'Assistant'],
    ]);
    const { body } = buildBody(trunk, { sip_trunk_type: 'number', sip_password: 'pw-123', allowed_inbound_ips: '10.0.0.1\n 10.0.0.2 ,', assistant_id: '7' }, { update: false });
    expect(body).toEqual({ sip_trunk_type: 'number', sip_password: 'pw-123', allowed_inbound_ips: ['10.0.0.1', '10.0.0.2'], assistant_id: 7 });
  });
});

