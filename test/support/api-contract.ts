import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * The contract between the API and its document: every answer a test provokes from a documented
 * route must be a status that route documents, in the documented media type, with a body the
 * documented schema accepts. Installed by the test harnesses (an onSend recorder, nothing in
 * product code), checked when the app closes.
 */

export interface RecordedResponse {
  method: string;
  /** The route as fastify knows it (`/api/user/assistant/:id`), undefined when none matched. */
  route: string | undefined;
  status: number;
  contentType: string;
  /** The body as sent; undefined when streamed (a file download). */
  body: string | undefined;
}

/** Records every answer the app sends; add before the app is ready. */
export function recordResponses(app: FastifyInstance): RecordedResponse[] {
  const recorded: RecordedResponse[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    recorded.push({
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      contentType: String(reply.getHeader('content-type') ?? ''),
      body: typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined,
    });
    return payload;
  });
  return recorded;
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}

// ajv-formats is CommonJS with `exports.default`: under NodeNext the default import is the module.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2020) => unknown }).default;

/** Checks recorded answers against an OpenAPI document (3.1: JSON Schema 2020-12). */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `METHOD /path status`: every documented answer some recorded response matched. */
  readonly seen = new Set<string>();

  constructor(
    private readonly doc: { paths: Record<string, Record<string, Operation>> },
    private readonly prefix = '/api',
  ) {
    addFormats(this.ajv);
  }

  /** The document's path of a fastify route, or undefined for what the document does not cover. */
  pathOf(route: string | undefined): string | undefined {
    if (!route?.startsWith(`${this.prefix}/`)) return undefined;
    const path = route.slice(this.prefix.length).replace(/:([A-Za-z_]+)/g, '{$1}');
    return this.doc.paths[path] ? path : undefined;
  }

  /** What is wrong with one answer (empty: it keeps the contract, or its route is not documented). */
  check(r: RecordedResponse): string[] {
    const path = this.pathOf(r.route);
    if (!path || r.method === 'HEAD') return [];
    const where = `${r.method} ${path} → ${r.status}`;
    const op = this.doc.paths[path]![r.method.toLowerCase()];
    if (!op) return [`${where}: the method is not documented`];
    const answer = op.responses[String(r.status)];
    if (!answer) return [`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')}); body ${clip(r.body)}`];
    const media = r.contentType.split(';')[0]!.trim().toLowerCase();
    const content = answer.content ?? {};
    if (!(media in content)) return [`${where}: content type ${media || '(none)'} not documented (documented: ${Object.keys(content).join(', ') || 'no body'})`];
    this.seen.add(`${r.method} ${path} ${r.status}`);
    if (media !== 'application/json' || r.body === undefined) return [];
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      return [`${where}: the body is not JSON: ${clip(r.body)}`];
    }
    const key = `${r.method} ${path} ${r.status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(content[media]!.schema);
      this.compiled.set(key, validate);
    }
    if (validate(body)) return [];
    const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    return [`${where}: body does not match its schema: ${problems.join('; ')}; body ${clip(r.body)}`];
  }

  /** Every problem of the recorded answers, each distinct message once. */
  checkAll(recorded: readonly RecordedResponse[]): string[] {
    return [...new Set(recorded.flatMap((r) => this.check(r)))];
  }
}

function clip(text: string | undefined): string {
  if (text === undefined) return '(streamed)';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * For a harness's close(): checks what the app answered against the document it serves, and
 * throws with every broken answer. The document is read through the app itself.
 */
export async function assertContract(app: FastifyInstance, recorded: readonly RecordedResponse[]): Promise<void> {
  if (recorded.length === 0) return;
  const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  const problems = new ContractChecker(JSON.parse(res.body) as ConstructorParameters<typeof ContractChecker>[0]).checkAll(recorded);
  if (problems.length > 0) {
    throw new Error(`${problems.length} answer(s) break the API document (/api/openapi.json):\n  ${problems.join('\n  ')}`);
  }
}
