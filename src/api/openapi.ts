import { z } from 'zod';
import type { Api, Recorded } from './route.ts';
import { errorAnswers } from './error-bodies.ts';

function schemaOf(type: z.ZodType | undefined, io: 'input' | 'output' = 'input'): Record<string, unknown> | undefined {
  if (!type) return undefined;
  try {
    const { $schema: _, ...schema } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>;
    return schema;
  } catch (err) {
    // A request schema zod cannot render is documented as "anything"; an answer's schema must render.
    if (io === 'output') throw err;
    return {};
  }
}

interface ResponseObject {
  description: string;
  content?: Record<string, { schema: Record<string, unknown> }>;
}

/** The success answer and every failure the route can give, each with its body schema. */
function responses(r: Recorded): Record<string, ResponseObject> {
  const success: ResponseObject = { description: 'Success' };
  if (r.produces) success.content = { [r.produces]: { schema: r.produces.startsWith('audio/') ? { type: 'string', format: 'binary' } : { type: 'string' } } };
  else if (r.response) success.content = { 'application/json': { schema: schemaOf(r.response, 'output')! } };
  const out: Record<string, ResponseObject> = { [String(r.status)]: success };
  if (r.ranges) out['206'] = { description: 'Partial content: the one byte range the Range header asked for (Content-Range names it and the size)', ...(success.content ? { content: success.content } : {}) };
  for (const [status, e] of Object.entries(errorAnswers(r))) {
    out[status] = { description: e.description, content: { 'application/json': { schema: schemaOf(e.schema, 'output')! } } };
  }
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
