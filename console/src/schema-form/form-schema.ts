/**
 * Forms derived from the API's own schema: a request body schema in /api/openapi.json (the
 * assistant's POST /user/assistant and PUT /user/assistant/{id} above all, also SIP trunks,
 * numbers and campaigns) becomes a list of field descriptors (kind, bounds, required, options,
 * hint, default). Pure: no DOM, no fetch, so it is unit-tested without a browser.
 *
 * What JSON Schema cannot say comes from the small tables below, each named for what it holds:
 * which catalog fills an id field (REFERENCES), which fields only one mode uses (MODE_ONLY, the
 * API's rules in src/assistants/rules.ts), which enum options one mode refuses (OPTION_MODES),
 * and how fields are grouped on the page (GROUPS).
 */

export type Mode = 'pipeline' | 'multimodal' | 'dualplex';
export const MODES: readonly Mode[] = ['pipeline', 'multimodal', 'dualplex'];
const REALTIME: readonly Mode[] = ['multimodal', 'dualplex'];

/** The subset of JSON Schema the API document uses for bodies. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  format?: string;
  description?: string;
  default?: unknown;
}

export type FieldKind = 'text' | 'secret' | 'textarea' | 'url' | 'integer' | 'number' | 'boolean' | 'choice' | 'reference' | 'references' | 'list' | 'json';

/** Where the options of an id field come from (paths under /api). */
export type Source =
  | 'voices'
  | 'languages'
  | 'llm-models'
  | 'multimodal-models'
  | 'synthesizer-providers'
  | 'transcriber-providers'
  | 'knowledge-bases'
  | 'tools'
  | 'phone-numbers'
  | 'folders'
  | 'labels'
  | 'assistants';

export const SOURCE_PATHS: Record<Source, string> = {
  voices: '/user/assistants/voices',
  languages: '/user/assistants/languages',
  'llm-models': '/user/assistants/llm-models',
  'multimodal-models': '/user/assistants/multimodal-models',
  'synthesizer-providers': '/user/assistants/synthesizer-providers',
  'transcriber-providers': '/user/assistants/transcriber-providers',
  'knowledge-bases': '/user/knowledge-bases',
  tools: '/user/tools',
  'phone-numbers': '/user/phone-numbers',
  folders: '/user/folders',
  labels: '/user/labels',
  assistants: '/user/assistants',
};

/** Integer id fields whose values are picked from a list rather than typed. */
export const REFERENCES: Record<string, Source> = {
  voice_id: 'voices',
  language_id: 'languages',
  secondary_language_ids: 'languages',
  llm_model_id: 'llm-models',
  chat_llm_fallback_id: 'llm-models',
  multimodal_model_id: 'multimodal-models',
  synthesizer_provider_id: 'synthesizer-providers',
  transcriber_provider_id: 'transcriber-providers',
  knowledgebase_id: 'knowledge-bases',
  tool_ids: 'tools',
  phone_number_id: 'phone-numbers',
  folder_id: 'folders',
  label_ids: 'labels',
  // Campaigns.
  assistant_id: 'assistants',
};

/**
 * Fields only some modes use (src/assistants/rules.ts): the others accept and ignore them, or
 * refuse them (fillers, transcriber, interruptions off), so the form hides them there.
 */
export const MODE_ONLY: Record<string, readonly Mode[]> = {
  llm_model_id: ['pipeline'],
  transcriber_provider_id: ['pipeline'],
  fillers: ['pipeline'],
  filler_config: ['pipeline'],
  allow_interruptions: ['pipeline'],
  multimodal_model_id: REALTIME,
  chat_llm_fallback_id: REALTIME,
  turn_detection_threshold: REALTIME,
};

/** Fields a mode requires although the schema has them optional (rules.ts). */
export const MODE_REQUIRED: Record<string, readonly Mode[]> = {
  llm_model_id: ['pipeline'],
  multimodal_model_id: REALTIME,
};

/** Enum options only some modes accept: knowledgebase_mode `prompt` is pipeline only. */
export const OPTION_MODES: Record<string, Record<string, readonly Mode[]>> = {
  knowledgebase_mode: { prompt: ['pipeline'] },
};

/** Sections of the page, in order; a field the table does not name goes to the last one. */
export const GROUPS: ReadonlyArray<{ title: string; fields: readonly string[] }> = [
  { title: 'Basics', fields: ['name', 'type', 'mode', 'language_id', 'voice_id', 'timezone', 'initial_message', 'system_prompt'] },
  {
    title: 'Models and speech',
    fields: [
      'llm_model_id',
      'multimodal_model_id',
      'chat_llm_fallback_id',
      'llm_temperature',
      'turn_detection_threshold',
      'secondary_language_ids',
      'synthesizer_provider_id',
      'transcriber_provider_id',
      'tts_emotion_enabled',
      'voice_stability',
      'voice_similarity',
      'speech_speed',
    ],
  },
  { title: 'Tools and knowledge', fields: ['tool_ids', 'tools', 'knowledgebase_id', 'knowledgebase_mode'] },
  { title: 'Telephony and organization', fields: ['phone_number_id', 'folder_id', 'label_ids'] },
  {
    title: 'Call behavior',
    fields: [
      'allow_interruptions',
      'fillers',
      'filler_config',
      'record',
      'enable_noise_cancellation',
      'wait_for_customer',
      'max_duration',
      'max_silence_duration',
      'max_initial_silence_duration',
      'ringing_time',
      'reengagement_interval',
      'reengagement_prompt',
      'end_call_on_voicemail',
      'voice_mail_message',
      'endpoint_type',
      'endpoint_sensitivity',
      'interrupt_sensitivity',
      'min_interrupt_words',
      'ambient_sound',
      'ambient_sound_volume',
    ],
  },
  {
    title: 'Webhooks, evaluation and chat',
    fields: [
      'is_webhook_active',
      'webhook_url',
      'send_webhook_only_on_completed',
      'include_recording_in_webhook',
      'post_call_evaluation',
      'post_call_schema',
      'variables',
      'conversation_inactivity_timeout',
      'conversation_ended_retrigger',
      'conversation_ended_webhook_url',
    ],
  },
];
const OTHER_GROUP = 'Other';

/** Labels the field name does not spell well by itself. */
const LABELS: Record<string, string> = {
  knowledgebase_id: 'Knowledge base',
  knowledgebase_mode: 'Knowledge base mode',
  tool_ids: 'Custom tools',
  tools: 'Built-in tools (JSON)',
  filler_config: 'Filler phrases (JSON)',
  post_call_schema: 'Post-call schema (JSON)',
  variables: 'Variables (JSON)',
  is_webhook_active: 'Post-call webhook active',
  tts_emotion_enabled: 'Emotional speech',
  chat_llm_fallback_id: 'Fallback LLM for tool calls',
  voice_mail_message: 'Voicemail message',
};
const ACRONYMS: Record<string, string> = { llm: 'LLM', tts: 'TTS', url: 'URL', ai: 'AI', sip: 'SIP', ips: 'IPs', srtp: 'SRTP', nat: 'NAT' };

export function labelOf(name: string): string {
  if (LABELS[name]) return LABELS[name];
  const words = name
    .replace(/_ids$/, 's')
    .replace(/_id$/, '')
    .split('_')
    .map((w) => ACRONYMS[w] ?? w);
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export interface FieldDescriptor {
  name: string;
  label: string;
  kind: FieldKind;
  /** Required by the schema, or by the mode (see `forMode`). */
  required: boolean;
  /** null is accepted: an emptied input clears the field. */
  nullable: boolean;
  options?: string[];
  source?: Source;
  min?: number;
  max?: number;
  /** A bound that is not included (`exclusiveMinimum`). */
  exclusiveMin?: boolean;
  step?: string;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  default?: unknown;
  /** The schema's description followed by bounds and default, in words. */
  hint: string;
  group: string;
  /** Modes the field is shown in. */
  modes: readonly Mode[];
}

/** The non-null branch of `anyOf: [X, {type: null}]`, and whether null was allowed. */
function unwrapNullable(s: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (s.anyOf) {
    const rest = s.anyOf.filter((b) => b.type !== 'null');
    const nullable = rest.length < s.anyOf.length;
    if (rest.length === 1) return { schema: { ...rest[0], description: s.description ?? rest[0]!.description, default: s.default ?? rest[0]!.default }, nullable };
    return { schema: s, nullable };
  }
  if (Array.isArray(s.type) && s.type.includes('null')) {
    const types = s.type.filter((t) => t !== 'null');
    return { schema: { ...s, type: types.length === 1 ? types[0] : types }, nullable: true };
  }
  return { schema: s, nullable: false };
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Bounds that only say "any safe integer" are noise in a hint. */
const meaningful = (n: number | undefined) => (n !== undefined && Math.abs(n) < MAX_SAFE ? n : undefined);

function kindOf(name: string, s: JsonSchema): FieldKind {
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'integer' && REFERENCES[name]) return 'reference';
  if (type === 'array' && s.items && s.items.type === 'integer' && REFERENCES[name]) return 'references';
  if (s.enum && s.enum.every((v) => typeof v === 'string')) return 'choice';
  if (type === 'boolean') return 'boolean';
  if (type === 'array' && s.items?.type === 'string') return 'list';
  if (type === 'integer') return 'integer';
  if (type === 'number') return 'number';
  if (type === 'string') {
    if (s.format === 'uri') return 'url';
    if (/password|secret/.test(name)) return 'secret';
    return (s.maxLength ?? 0) > 255 ? 'textarea' : 'text';
  }
  return 'json';
}

/** `{start, end, days, timezone}` for an object, `[{…}]` for an array of them: the JSON's shape. */
function shapeOf(s: JsonSchema): string {
  if (s.properties) return `{${Object.keys(s.properties).join(', ')}}`;
  if (s.items) return `[${s.items.properties ? shapeOf(s.items) : '…'}]`;
  return 'a JSON value';
}

function hintOf(d: Omit<FieldDescriptor, 'hint'>, description: string | undefined, s: JsonSchema): string {
  const parts: string[] = [];
  if (description) parts.push(description);
  else if (d.kind === 'json') parts.push(`JSON: ${shapeOf(s)}.`);
  if (d.kind === 'integer' || d.kind === 'number') {
    if (d.min !== undefined && d.max !== undefined) parts.push(`${d.min} to ${d.max}.`);
    else if (d.min !== undefined) parts.push(`At least ${d.min}.`);
    else if (d.max !== undefined) parts.push(`At most ${d.max}.`);
  }
  if (d.kind === 'list') parts.push('One per line.');
  if ((d.kind === 'text' || d.kind === 'textarea' || d.kind === 'url') && d.maxLength !== undefined) parts.push(`Up to ${d.maxLength} characters.`);
  if ((d.kind === 'references' || d.kind === 'json' || d.kind === 'list') && d.maxItems !== undefined) parts.push(`Up to ${d.maxItems} items.`);
  if (d.default !== undefined && !(Array.isArray(d.default) && d.default.length === 0)) {
    parts.push(`Default: ${typeof d.default === 'boolean' ? (d.default ? 'on' : 'off') : String(d.default)}.`);
  }
  return parts.join(' ');
}

/**
 * Every field of a request body schema, in page order: the assistant's GROUPS, then the
 * schema's order (`order: 'schema'` keeps the schema's order alone, for the other forms).
 */
export function describeFields(body: JsonSchema, opts: { order?: 'groups' | 'schema' } = {}): FieldDescriptor[] {
  const required = new Set(body.required ?? []);
  const out: FieldDescriptor[] = [];
  for (const [name, raw] of Object.entries(body.properties ?? {})) {
    const { schema: s, nullable } = unwrapNullable(raw);
    // A constant is not a choice: the API fills it (a caller-ID number's `type`).
    if (s.const !== undefined) continue;
    const kind = kindOf(name, s);
    const group = GROUPS.find((g) => g.fields.includes(name))?.title ?? OTHER_GROUP;
    const integer = kind === 'integer' || (Array.isArray(s.type) ? s.type.includes('integer') : s.type === 'integer');
    const min = meaningful(s.minimum) ?? meaningful(s.exclusiveMinimum);
    const base: Omit<FieldDescriptor, 'hint'> = {
      name,
      label: labelOf(name),
      kind,
      required: required.has(name),
      nullable,
      group,
      modes: MODE_ONLY[name] ?? MODES,
      ...(kind === 'choice' && { options: (s.enum as string[]).slice() }),
      ...(REFERENCES[name] && (kind === 'reference' || kind === 'references') && { source: REFERENCES[name] }),
      ...(min !== undefined && { min }),
      ...(s.exclusiveMinimum !== undefined && meaningful(s.exclusiveMinimum) !== undefined && { exclusiveMin: true }),
      ...(meaningful(s.maximum) !== undefined && { max: s.maximum }),
      ...((kind === 'integer' || kind === 'number') && { step: integer ? '1' : 'any' }),
      ...(s.minLength !== undefined && { minLength: s.minLength }),
      ...(s.maxLength !== undefined && { maxLength: s.maxLength }),
      ...(s.maxItems !== undefined && { maxItems: s.maxItems }),
      ...(s.default !== undefined && { default: s.default }),
    };
    out.push({ ...base, hint: hintOf(base, s.description, s) });
  }
  if (opts.order === 'schema') return out;
  const order = (d: FieldDescriptor) => {
    const g = GROUPS.findIndex((x) => x.title === d.group);
    return g === -1 ? GROUPS.length : g;
  };
  return out
    .map((d, i) => ({ d, i }))
    .sort((a, b) => order(a.d) - order(b.d) || fieldIndex(a.d) - fieldIndex(b.d) || a.i - b.i)
    .map((x) => x.d);
}

function fieldIndex(d: FieldDescriptor): number {
  const g = GROUPS.find((x) => x.title === d.group);
  return g ? g.fields.indexOf(d.name) : 0;
}

/** The fields a mode shows, with the mode's own requirements and enum options applied. */
export function forMode(fields: readonly FieldDescriptor[], mode: Mode): FieldDescriptor[] {
  return fields
    .filter((f) => f.modes.includes(mode))
    .map((f) => {
      let next = f;
      if (MODE_REQUIRED[f.name]?.includes(mode)) next = { ...next, required: true };
      const optionModes = OPTION_MODES[f.name];
      if (optionModes && next.options) next = { ...next, options: next.options.filter((o) => !optionModes[o] || optionModes[o]!.includes(mode)) };
      return next;
    });
}

/** An input's state: text for typed and picked values, a flag, or the picked ids. */
export type FormValue = string | boolean | number[];
export type FormValues = Record<string, FormValue>;

function jsonText(v: unknown): string {
  return v === undefined || v === null ? '' : JSON.stringify(v, null, 2);
}

/**
 * The record's built-in tools come back as `{type, data}`; they are sent as `{type, ...fields}`.
 * A masked secret (calendar_api_key) shown back would be saved as the mask, so the form asks for
 * it again rather than echoing it.
 */
export function toolsForEditing(stored: unknown): unknown[] {
  if (!Array.isArray(stored)) return [];
  return stored.map((t) => {
    const tool = t as { type?: unknown; data?: Record<string, unknown> };
    if (!tool || typeof tool !== 'object' || !tool.data) return t;
    const { calendar_api_key: _masked, ...rest } = tool.data;
    return { type: tool.type, ...rest, ...(_masked !== undefined && { calendar_api_key: '' }) };
  });
}

/** Initial input states: from a stored assistant when editing, else from the schema's defaults. */
export function initialValues(fields: readonly FieldDescriptor[], record?: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    const v = record ? (f.name === 'tools' ? toolsForEditing(record.tools) : record[f.name]) : f.default;
    switch (f.kind) {
      case 'boolean':
        values[f.name] = typeof v === 'boolean' ? v : false;
        break;
      case 'references':
        values[f.name] = Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : [];
        break;
      case 'json':
        values[f.name] = Array.isArray(v) && v.length === 0 && !record ? '' : jsonText(v);
        break;
      case 'list':
        values[f.name] = Array.isArray(v) ? v.map(String).join('\n') : '';
        break;
      default:
        values[f.name] = v === undefined || v === null ? '' : String(v);
    }
  }
  if (!record && values.type === '' && fields.some((f) => f.name === 'type')) values.type = fields.find((f) => f.name === 'type')?.options?.[0] ?? '';
  if (!record && values.mode === '' && fields.some((f) => f.name === 'mode')) values.mode = fields.find((f) => f.name === 'mode')?.options?.[0] ?? '';
  return values;
}

export interface BuiltBody {
  body: Record<string, unknown>;
  /** Inputs that could not be read as their type (before anything is sent). */
  errors: Record<string, string[]>;
}

/**
 * The request body from the inputs of the shown fields. An empty input is left out on create
 * (the API applies its default) and sent as null on update where null clears the field.
 */
export function buildBody(fields: readonly FieldDescriptor[], values: FormValues, opts: { update: boolean }): BuiltBody {
  const body: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') {
      body[f.name] = v === true;
      continue;
    }
    if (f.kind === 'references') {
      body[f.name] = Array.isArray(v) ? v : [];
      continue;
    }
    const text = typeof v === 'string' ? v : '';
    if (text.trim() === '' && !(f.kind === 'text' && f.minLength === undefined && f.required)) {
      if (opts.update && f.nullable) body[f.name] = null;
      continue;
    }
    switch (f.kind) {
      case 'integer':
      case 'reference': {
        const n = Number(text);
        if (!Number.isInteger(n)) errors[f.name] = [`The ${f.label.toLowerCase()} must be a whole number.`];
        else body[f.name] = n;
        break;
      }
      case 'number': {
        const n = Number(text);
        if (!Number.isFinite(n)) errors[f.name] = [`The ${f.label.toLowerCase()} must be a number.`];
        else body[f.name] = n;
        break;
      }
      case 'list':
        body[f.name] = text
          .split(/[\n,]/)
          .map((x) => x.trim())
          .filter(Boolean);
        break;
      case 'json':
        try {
          body[f.name] = JSON.parse(text);
        } catch {
          errors[f.name] = [`The ${f.label.replace(/ \(JSON\)$/, '').toLowerCase()} must be valid JSON.`];
        }
        break;
      default:
        body[f.name] = text;
    }
  }
  return { body, errors };
}

/**
 * The API's 422 errors by the form field they belong to: `tools.0.phone_number` belongs to
 * `tools`; errors naming no shown field are kept under '' for a summary.
 */
export function errorsByField(apiErrors: Record<string, string[]>, fields: readonly FieldDescriptor[]): Record<string, string[]> {
  const names = new Set(fields.map((f) => f.name));
  const out: Record<string, string[]> = {};
  for (const [key, messages] of Object.entries(apiErrors)) {
    const top = key.split('.')[0] ?? key;
    const target = names.has(top) ? top : '';
    (out[target] ??= []).push(...(Array.isArray(messages) ? messages : [String(messages)]));
  }
  return out;
}

/** The request body schema of an operation in an OpenAPI document. */
export function requestBodySchema(doc: unknown, path: string, method: 'post' | 'put'): JsonSchema | undefined {
  const op = (doc as { paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>> })?.paths?.[path]?.[method];
  return op?.requestBody?.content?.['application/json']?.schema;
}
