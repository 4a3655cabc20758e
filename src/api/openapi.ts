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
      responses: { [String(r.status)]: { description: 'Success' } },
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
