import type { Catalog } from '../catalog/catalog.ts';
import type { Store } from '../store/index.ts';
import { isMasked, MASK, maskSecret, type SecretBox } from '../store/secrets.ts';
import { addError, throwIfErrors, zodErrors } from '../api/validation.ts';
import { MAX_LISTED_ERRORS, ValidationError } from '../util/errors.ts';
import { iso } from '../store/json.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import { DEFAULTS, type AssistantConfig } from './config.ts';
import { createSchema, FIELD_NAMES, NULLABLE, READ_ONLY, unknownFields, updateSchema, type CreateInput } from './fields.ts';
import type { z } from 'zod';
import { catalogRules } from './rules.ts';
import { ownershipRules } from './ownership.ts';
import { urlTargetRules } from './url-targets.ts';
import { defaultOutbound, type OutboundPolicy } from '../net/outbound/index.ts';
import { fromStored, toStored, type StoredTool } from './tools.ts';
import { dropStaleReferences, replacementVoice } from './stale.ts';
import type { AssistantStatus } from './status.ts';

export interface AssistantDeps {
  catalog: Catalog;
  store: Store;
  secrets: SecretBox;
  /** Which addresses the assistant's URLs may name (default: public ones only). */
  outbound?: OutboundPolicy;
}

/** How a sealed calendar key is shown (maskSecret): never the secret, but enough to recognise it. */
function maskKey(deps: AssistantDeps, sealed: string): string {
  try {
    return maskSecret(deps.secrets.open(sealed));
  } catch {
    return MASK;
  }
}

/** Stored tools as a client sees them: calendar keys masked. */
function maskTools(deps: AssistantDeps, tools: readonly StoredTool[]): StoredTool[] {
  return tools.map((t) =>
    t.type === 'calendar_booking' ? { ...t, data: { ...t.data, calendar_api_key: maskKey(deps, t.data.calendar_api_key) } } : t,
  );
}

/**
 * Seals calendar keys of validated tools. A masked key (a GET echoed back in a PUT) keeps the
 * stored secret it stands for; anything else is a new secret.
 */
function sealTools(deps: AssistantDeps, tools: StoredTool[], previous: readonly StoredTool[]): StoredTool[] {
  return tools.map((t) => {
    if (t.type !== 'calendar_booking') return t;
    const given = t.data.calendar_api_key;
    if (isMasked(given)) {
      const match = previous.find((p) => p.type === 'calendar_booking' && maskKey(deps, p.data.calendar_api_key) === given);
      if (match?.type === 'calendar_booking') return { ...t, data: { ...t.data, calendar_api_key: match.data.calendar_api_key } };
    }
    return { ...t, data: { ...t.data, calendar_api_key: deps.secrets.seal(given) } };
  });
}

const CREATE_FIELDS: ReadonlySet<string> = new Set(FIELD_NAMES);
const UPDATE_FIELDS: ReadonlySet<string> = new Set([...FIELD_NAMES, ...READ_ONLY]);

/**
 * Parses a body, reporting shape errors and unknown fields together. `reportInput` lets the
 * messages tell "missing" from "wrong type".
 */
function parseBody<S extends z.ZodType>(schema: S, allowed: ReadonlySet<string>, input: unknown): z.output<S> {
  const unknown = unknownFields(input, allowed);
  // zod sees only the known fields: it reports nothing about the others, and 80,000 of them
  // would cost it as much as the rest of the request.
  const known = unknown.length > 0 ? knownOnly(input as Record<string, unknown>, allowed) : input;
  const res = schema.safeParse(known, { reportInput: true });
  // Known fields' errors first: when a 422 lists only the first errors, those say the most.
  const { errors, unlisted } = res.success ? { errors: {}, unlisted: 0 } : zodErrors(res.error);
  for (const key of unknown.slice(0, MAX_LISTED_ERRORS)) addError(errors, key, `The ${key} field is not a known assistant field.`);
  if (!res.success || unknown.length > 0) {
    throw new ValidationError(errors, undefined, unlisted + Math.max(0, unknown.length - MAX_LISTED_ERRORS));
  }
  return res.data;
}

/** A copy with the allowed fields only: a walk over the few allowed names, not the many given. */
function knownOnly(input: Record<string, unknown>, allowed: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of allowed) if (Object.hasOwn(input, k)) out[k] = input[k];
  return out;
}

/** Validates a complete candidate (create body or merged update) and applies defaults. */
async function validate(
  deps: AssistantDeps,
  accountId: number,
  candidate: unknown,
  previousTools: readonly StoredTool[],
  selfId?: number,
): Promise<AssistantConfig> {
  const input: CreateInput = parseBody(createSchema, CREATE_FIELDS, candidate);
  const errors: Record<string, string[]> = {};
  const derived = catalogRules(input, deps.catalog, accountId, errors);
  urlTargetRules(input, deps.outbound ?? defaultOutbound().policy, errors);
  await ownershipRules(deps.store, accountId, input, errors, selfId);
  throwIfErrors(errors);

  const nulls = Object.fromEntries(Object.keys(NULLABLE).map((k) => [k, null]));
  const config = { ...DEFAULTS, ...nulls } as Record<string, unknown>;
  for (const [k, v] of Object.entries(input)) if (v !== undefined) config[k] = v;
  config.synthesizer_provider_id = derived.synthesizer_provider_id;
  config.transcriber_provider_id = derived.transcriber_provider_id;
  config.tools = sealTools(deps, (input.tools ?? []).map(toStored), previousTools);
  return config as AssistantConfig;
}

export function validateCreate(deps: AssistantDeps, accountId: number, body: unknown): Promise<AssistantConfig> {
  return validate(deps, accountId, body, []);
}

/**
 * PUT semantics: the sent fields are merged onto the stored configuration and the result is
 * validated whole, as on create. `tools`, when sent, replaces every built-in tool (`[]` removes
 * all). Provider ids the engine chose automatically are chosen again when what they depend on
 * (voice, language, mode) changes and the client did not send them.
 */
export async function validateUpdate(
  deps: AssistantDeps,
  accountId: number,
  stored: AssistantRecord,
  body: unknown,
): Promise<AssistantConfig> {
  const patch = { ...(parseBody(updateSchema, UPDATE_FIELDS, body) as Record<string, unknown>) };
  for (const k of READ_ONLY) delete patch[k];
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete patch[k];

  // References the client did not send, to things gone since, do not fail its update.
  const base = await dropStaleReferences(deps.store, accountId, stored.config, new Set(Object.keys(patch)));
  const previous = base.tools;
  const merged: Record<string, unknown> = {
    ...base,
    tools: maskTools(deps, previous).map(fromStored),
    ...patch,
  };
  const changed = (k: string) => k in patch && patch[k] !== (stored.config as Record<string, unknown>)[k];
  if (!('synthesizer_provider_id' in patch) && (changed('voice_id') || changed('language_id'))) merged.synthesizer_provider_id = null;
  if (!('voice_id' in patch)) {
    const voice = replacementVoice(deps.catalog, accountId, merged as Pick<AssistantConfig, 'voice_id' | 'mode' | 'language_id'>);
    if (voice !== undefined) {
      merged.voice_id = voice;
      if (!('synthesizer_provider_id' in patch)) merged.synthesizer_provider_id = null;
    }
  }
  if (!('transcriber_provider_id' in patch) && (changed('mode') || changed('language_id'))) merged.transcriber_provider_id = null;
  return validate(deps, accountId, merged, previous, stored.id);
}

/** GET /user/assistant/{id}: every accepted field plus identity, status and timestamps. */
export function recordView(deps: AssistantDeps, a: AssistantRecord, status: AssistantStatus): Record<string, unknown> {
  return {
    id: a.id,
    uuid: a.uuid,
    ...a.config,
    tools: maskTools(deps, a.config.tools),
    status,
    inbound_webhook_enabled: a.inboundWebhookEnabled,
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
  };
}

/** An item of GET /user/assistants. */
export function listItem(a: AssistantRecord, status: AssistantStatus): Record<string, unknown> {
  return {
    id: a.id,
    uuid: a.uuid,
    name: a.name,
    type: a.type,
    mode: a.mode,
    status,
    folder_id: a.folderId,
    phone_number_id: a.phoneNumberId,
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
  };
}
