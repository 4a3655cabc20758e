import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseWith } from './validation.ts';
import { ValidationError } from '../util/errors.ts';

/**
 * The spec fixes an error body shape per endpoint group; a route names its style and the one
 * error handler (errors.ts) shapes every failure accordingly.
 */
export type ErrorStyle =
  | 'default' // {message} and 422 {message, errors}
  | 'status' // {status: false, error}
  | 'success' // {success: false, error, error_code}
  | 'campaign' // {message, success: false, data?}
  | 'trunk'; // {error}

export type Auth = 'required' | 'optional' | 'none';

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** The authenticated account; 0 only on routes with auth 'none'/'optional' and no key given. */
  accountId: number;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteDef<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the API prefix, fastify syntax: `/user/assistant/:id`. */
  url: string;
  summary: string;
  tags?: string[];
  auth?: Auth;
  errorStyle?: ErrorStyle;
  body?: B;
  query?: Q;
  params?: P;
  /** Status of a success answer (default 200). */
  status?: number;
  /** Body content type other than JSON (the Twilio webhook is form-encoded). */
  consumes?: string;
  /**
   * The success body as the handler builds it (documentation and the contract test; answers are
   * not serialized through it). Absent only on routes that answer with another media type.
   */
  response?: z.ZodType;
  /** Media type of a success answer that is not JSON (a WAV file, TwiML). */
  produces?: string;
  /** The answer honours one `Range: bytes=` (206 with Content-Range; documented beside the success). */
  ranges?: boolean;
  /**
   * Error statuses this route answers with beyond those every route of its kind gives
   * (openapi.ts: 401/429 by auth, 400/422 by input, 404 by path id, 500), each with when.
   * The body is the route's error style; a description here also replaces a derived one.
   */
  errors?: Readonly<Record<number, string>>;
  /**
   * Runs once the request is authenticated, before its body is read or anything is validated:
   * what must count every request (a rate limit) goes here, so invalid ones count too.
   */
  onRequest?(request: FastifyRequest, reply: FastifyReply): Promise<void> | void;
  handler(ctx: RouteContext<z.output<B>, z.output<Q>, z.output<P>>): Promise<unknown> | unknown;
}

export interface Recorded {
  method: string;
  url: string;
  summary: string;
  tags: string[];
  auth: Auth;
  errorStyle: ErrorStyle;
  status: number;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  consumes?: string;
  response?: z.ZodType;
  produces?: string;
  ranges?: boolean;
  errors: Readonly<Record<number, string>>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
    auth?: Auth;
  }
  interface FastifyRequest {
    accountId: number;
  }
}

/** Registers routes on fastify and remembers their schemas for the OpenAPI document. */
export class Api {
  readonly routes: Recorded[] = [];

  constructor(private readonly app: FastifyInstance, readonly prefix: string) {}

  /** Runs as the app starts closing, before it waits for open requests: long-lived streams end here. */
  onPreClose(hook: () => void): void {
    this.app.addHook('preClose', (done) => {
      hook();
      done();
    });
  }

  /** Runs when the app closes: a route group releases what it holds (child processes, caches). */
  onClose(hook: () => Promise<void> | void): void {
    this.app.addHook('onClose', async () => {
      await hook();
    });
  }

  route<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
    def: RouteDef<B, Q, P>,
  ): void {
    const auth = def.auth ?? 'required';
    const status = def.status ?? 200;
    this.routes.push({
      method: def.method,
      url: def.url,
      summary: def.summary,
      tags: def.tags ?? [],
      auth,
      errorStyle: def.errorStyle ?? 'default',
      status,
      body: def.body,
      query: def.query,
      params: def.params,
      consumes: def.consumes,
      response: def.response,
      produces: def.produces,
      ...(def.ranges ? { ranges: true } : {}),
      errors: def.errors ?? {},
    });
    this.app.route({
      method: def.method,
      url: this.prefix + def.url,
      config: { errorStyle: def.errorStyle ?? 'default', auth },
      // Route hooks run after the app's own onRequest hooks (authentication).
      ...(def.onRequest ? { onRequest: async (request: FastifyRequest, reply: FastifyReply) => def.onRequest!(request, reply) } : {}),
      handler: async (request, reply) => {
        // Params before body: a bad id is a 404-style problem the body cannot fix.
        const params = def.params ? parseWith(def.params, request.params) : (request.params as z.output<P>);
        const query = def.query ? parseWith(def.query, request.query) : (request.query as z.output<Q>);
        // The form parser exists for the provider webhook (`consumes`); a JSON route takes JSON only.
        if (def.body && !def.consumes && request.body !== undefined && mediaType(request) !== 'application/json') {
          throw new ValidationError({ body: ['The request body must be JSON (Content-Type: application/json).'] });
        }
        const body = def.body ? parseWith(def.body, request.body ?? {}) : (request.body as z.output<B>);
        const result = await def.handler({ body, query, params, accountId: request.accountId, request, reply });
        if (reply.sent) return reply;
        return reply.code(status).send(result);
      },
    });
  }
}

function mediaType(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Ids as URLs spell them: decimal, no sign, no leading zero, within MAX_SAFE_INTEGER (16 digits at most). */
const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;

/**
 * What a path id becomes when it is not canonical (`0x1`, `1e0`, `01`, `+1`, `1.0`, `abc`): an id
 * no row has (ids start at 1; catalog ids too). Such a URL names nothing, so it answers exactly
 * like a missing id, by the route's own rule: the same 404 and body, the signed webhooks' 403,
 * whatever the route does for an id that does not exist. Number() alone would read all of the
 * above as 1.
 */
export const NO_SUCH_ID = 0;

/** A path id parameter; every route with a numeric id in its path uses this. */
export const pathId = z
  .string()
  .transform((s) => (CANONICAL_ID.test(s) && Number(s) <= Number.MAX_SAFE_INTEGER ? Number(s) : NO_SUCH_ID))
  .meta({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Decimal id; any other spelling names nothing (404).' });

export const idParams = z.object({ id: pathId });
