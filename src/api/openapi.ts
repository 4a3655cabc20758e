import { z } from 'zod';
import type { Api } from './route.ts';

function schemaOf(type: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!type) return undefined;
  try {
    return z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The success answer and the failures every route of its kind can give (bodies per the spec's Errors table). */
function responses(r: Api['routes'][number]): Record<string, { description: string; content?: unknown }> {
  const success = r.response
    ? { description: 'Success', content: { 'application/json': { schema: z.toJSONSchema(r.response, { io: 'output', unrepresentable: 'any' }) } } }
    : { description: 'Success' };
  const out: Record<string, { description: string; content?: unknown }> = { [String(r.status)]: success };
  if (r.body) out['400'] = { description: 'The body is not valid JSON' };
  if (r.params) out['404'] = { description: 'Not found (another account’s resource looks the same)' };
  if (r.body || r.params || r.query) out['422'] = { description: 'Validation failure: {message, errors: {field: [..]}}' };
  if (r.auth === 'required') out['401'] = { description: 'Missing or invalid API key' };
  if (r.auth !== 'none') out['429'] = { description: 'Rate limit exceeded: {message, retry_after}' };
  return out;
}

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function openApiDocument(api: Api, info: { title: string; version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of api.routes) {
    const path = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [where, type] of [['path', r.params], ['query', r.query]] as const) {
      const schema = schemaOf(type) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
      for (const [name, s] of Object.entries(schema?.properties ?? {})) {
        parameters.push({ name, in: where, required: where === 'path' || (schema?.required ?? []).includes(name), schema: s });
      }
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: r.tags,
      parameters,
      responses: responses(r),
    };
    if (r.auth === 'required') op.security = [{ bearer: [] }];
    if (r.auth === 'optional') op.security = [{}, { bearer: [] }];
    if (r.body) {
      op.requestBody = { required: true, content: { [r.consumes ?? 'application/json']: { schema: schemaOf(r.body) } } };
    }
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
