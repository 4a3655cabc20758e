import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import { addError, throwIfErrors } from '../validation.ts';
import type { AppContext } from '../../context.ts';
import type { Tool, ToolInput, ToolMethod } from '../../store/repos/tools.ts';
import { iso } from '../../store/json.ts';
import { isLoopbackHost } from '../../util/ip.ts';
import { NotFoundError } from '../../util/errors.ts';
import { defaultOutbound, outboundOf, type OutboundPolicy } from '../../net/outbound/index.ts';
import { isMasked, maskSecret } from '../../store/secrets.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

/**
 * Custom mid-call tools. The endpoint must be HTTPS; plain http is accepted only for loopback
 * hosts (localhost, 127.0.0.0/8, [::1]) so local stand-ins and development servers work without
 * ever sending arguments unencrypted over a network. Either way the host may not be an internal
 * address (loopback included) unless the operator's allow-list opens it (src/net/outbound).
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const MAX_SCHEMA_BYTES = 64 * 1024;
const MAX_HEADERS = 50;

/**
 * A record of at most `max` entries, counted before any entry is checked: 80,000 bad headers
 * cost one refusal, not 80,000 issues. Documented as the record it pipes into.
 */
function boundedRecord<K extends z.ZodType<string, string>, V extends z.ZodType>(field: string, max: number, key: K, value: V) {
  const record = z.record(key, value);
  const { $schema: _, ...doc } = z.toJSONSchema(record, { io: 'input' }) as Record<string, unknown>;
  return z
    .custom<Record<string, unknown>>((v) => !(v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > max), {
      message: `The ${field} field must not have more than ${max} entries.`,
    })
    .meta({ ...doc, maxProperties: max })
    .pipe(record);
}

const fields = {
  // OpenAI-style function names (what the model is told to call). A refine, not a regex, so the
  // message says what a name may hold rather than "must be a valid regex".
  name: z
    .string()
    .min(1)
    .max(64)
    .refine((n) => /^[a-zA-Z0-9_-]+$/.test(n), 'The name field may only contain letters, digits, underscores and hyphens.'),
  description: z.string().trim().min(1).max(1000),
  parameters: z.record(z.string(), z.unknown()),
  endpoint: z.string().min(1).max(2048),
  method: z.enum(METHODS),
  headers: boundedRecord('headers', MAX_HEADERS, z.string().min(1).max(256), z.string().max(8192)),
  timeout_ms: z.number().int().min(100).max(30_000),
};

const createBody = z.object({
  name: fields.name,
  description: fields.description,
  parameters: fields.parameters,
  endpoint: fields.endpoint,
  method: fields.method.default('POST'),
  headers: fields.headers.default({}),
  timeout_ms: fields.timeout_ms.default(10_000),
});

const updateBody = z.object({
  name: fields.name.optional(),
  description: fields.description.optional(),
  parameters: fields.parameters.optional(),
  endpoint: fields.endpoint.optional(),
  method: fields.method.optional(),
  headers: fields.headers.optional(),
  timeout_ms: fields.timeout_ms.optional(),
});

/** Endpoint rule above; the message names the field as the client sent it. */
export function endpointProblem(endpoint: string, policy: OutboundPolicy = defaultOutbound().policy): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'The endpoint field must be a valid URL.';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return 'The endpoint field must be an HTTPS URL (plain http is allowed only for localhost).';
  }
  return policy.urlProblem('endpoint', endpoint);
}

/** The parameters must describe an object of named arguments, as function calling expects. */
export function parametersProblems(schema: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push('The parameters field must be a JSON Schema with type "object".');
  const props = schema.properties;
  if (props === undefined || props === null || typeof props !== 'object' || Array.isArray(props)) {
    problems.push('The parameters field must have a "properties" object.');
  } else {
    for (const [name, sub] of Object.entries(props)) {
      if (sub === null || typeof sub !== 'object' || Array.isArray(sub)) problems.push(`The parameters property "${name}" must be a schema object.`);
    }
    const required = schema.required;
    if (required !== undefined) {
      if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
        problems.push('The parameters "required" entry must be an array of property names.');
      } else {
        for (const r of required) if (!(r in props)) problems.push(`The parameters "required" entry names an unknown property "${String(r)}".`);
      }
    }
  }
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) problems.push('The parameters field must not exceed 64 KB.');
  return problems;
}

/**
 * Headers as a client sent them, with the secrets they stand for: a value sent back masked as it
 * was read (a GET echoed in a PUT) keeps the stored value of the same header (names compared
 * without case, as HTTP does). A masked value that stands for nothing is refused, never stored:
 * it would be sent to the endpoint as the mask.
 */
function unmaskHeaders(given: Record<string, string>, stored: Record<string, string>, errors: Record<string, string[]>): Record<string, string> {
  const byName = new Map(Object.entries(stored).map(([k, v]) => [k.toLowerCase(), v]));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!isMasked(value)) {
      out[name] = value;
      continue;
    }
    const previous = byName.get(name.toLowerCase());
    if (previous !== undefined && maskSecret(previous) === value) out[name] = previous;
    else addError(errors, `headers.${name}`, `The ${name} header holds a masked value that matches no stored header; send the real value.`);
  }
  return out;
}

function validate(input: ToolInput, policy: OutboundPolicy, errors: Record<string, string[]> = {}): void {
  const endpoint = endpointProblem(input.endpoint, policy);
  if (endpoint) addError(errors, 'endpoint', endpoint);
  for (const p of parametersProblems(input.parameters)) addError(errors, 'parameters', p);
  throwIfErrors(errors);
}

const toolView = z.object({
  id: z.int(),
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()).meta({ description: 'JSON Schema of the arguments' }),
  endpoint: z.string(),
  method: z.enum(METHODS),
  headers: z.record(z.string(), z.string()).meta({ description: 'Values masked; send a masked value back unchanged to keep the stored one' }),
  timeout_ms: z.int(),
  created_at: timestamp,
  updated_at: timestamp,
});

export function presentTool(t: Tool) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    endpoint: t.endpoint,
    method: t.method,
    headers: Object.fromEntries(Object.entries(t.headers).map(([k, v]) => [k, maskSecret(v)])),
    timeout_ms: t.timeoutMs,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

export function registerToolRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Mid-Call Tools'];
  api.route({
    method: 'POST',
    url: '/user/tools',
    summary: 'Create a custom mid-call tool',
    tags,
    body: createBody,
    status: 201,
    response: withData(toolView),
    async handler({ body, accountId }) {
      const input: ToolInput = {
        name: body.name,
        description: body.description,
        parameters: body.parameters,
        endpoint: body.endpoint,
        method: body.method as ToolMethod,
        headers: {},
        timeoutMs: body.timeout_ms,
      };
      const errors: Record<string, string[]> = {};
      input.headers = unmaskHeaders(body.headers, {}, errors);
      validate(input, outboundOf(ctx).policy, errors);
      return { message: 'Tool created successfully', data: presentTool(await ctx.repos.tools.create(accountId, input)) };
    },
  });
  api.route({
    method: 'GET',
    url: '/user/tools',
    summary: 'List custom mid-call tools',
    tags,
    response: z.array(toolView),
    async handler({ accountId }) {
      return (await ctx.repos.tools.list(accountId)).map(presentTool);
    },
  });
  api.route({
    method: 'GET',
    url: '/user/tools/:id',
    summary: 'Get a custom mid-call tool',
    tags,
    params: idParams,
    response: toolView,
    async handler({ params, accountId }) {
      const tool = await ctx.repos.tools.get(accountId, params.id);
      if (!tool) throw new NotFoundError('Tool');
      return presentTool(tool);
    },
  });
  api.route({
    method: 'PUT',
    url: '/user/tools/:id',
    summary: 'Update a custom mid-call tool (fields not sent are kept)',
    tags,
    params: idParams,
    body: updateBody,
    response: withData(toolView),
    async handler({ params, body, accountId }) {
      const tool = await ctx.repos.tools.get(accountId, params.id);
      if (!tool) throw new NotFoundError('Tool');
      const input: ToolInput = {
        name: body.name ?? tool.name,
        description: body.description ?? tool.description,
        parameters: body.parameters ?? tool.parameters,
        endpoint: body.endpoint ?? tool.endpoint,
        method: (body.method as ToolMethod | undefined) ?? tool.method,
        headers: tool.headers,
        timeoutMs: body.timeout_ms ?? tool.timeoutMs,
      };
      const errors: Record<string, string[]> = {};
      if (body.headers) input.headers = unmaskHeaders(body.headers, tool.headers, errors);
      validate(input, outboundOf(ctx).policy, errors);
      const updated = await ctx.repos.tools.update(accountId, params.id, input);
      if (!updated) throw new NotFoundError('Tool');
      return { message: 'Tool updated successfully', data: presentTool(updated) };
    },
  });
  api.route({
    method: 'DELETE',
    url: '/user/tools/:id',
    summary: 'Delete a custom mid-call tool',
    tags,
    params: idParams,
    response: messageOnly,
    async handler({ params, accountId }) {
      if (!(await ctx.repos.tools.delete(accountId, params.id))) throw new NotFoundError('Tool');
      return { message: 'Tool deleted successfully' };
    },
  });
}
