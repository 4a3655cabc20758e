import { z } from 'zod';
import type { ErrorStyle, Recorded } from './route.ts';
import { sessionStatusView } from './response-schemas.ts';

/**
 * The error bodies errors.ts and auth.ts really send, as schemas, and which statuses a route
 * answers with: what the OpenAPI document lists for every operation.
 */

/** The auth hook's 401, on every route that takes a key. */
export const unauthorizedBody = z.object({ error: z.literal('Unauthorized'), message: z.string() });

/** The auth hook's 429 (per key), with Retry-After and the X-RateLimit-* headers. */
export const rateLimitedBody = z.object({ message: z.string(), retry_after: z.int().min(1).meta({ description: 'Seconds until a request is admitted again' }) });


/**
 * One body per style (errors.ts `errorBody`), with the extra fields some failures of that style
 * carry: a route limiter's `message` and `retry_after`, WhatsApp's `session_status`, the
 * campaign's `data`.
 */
const styleBodies: Record<ErrorStyle, z.ZodType> = {
  default: z.object({
    message: z.string(),
    error_code: z.string().optional().meta({ description: 'Machine-readable reason where the status alone is ambiguous, e.g. ROTATION_IN_PROGRESS' }),
  }),
  status: z.object({
    status: z.literal(false),
    error: z.string(),
    message: z.string().optional(),
    retry_after: z.int().min(1).optional(),
  }),
  success: z.object({
    success: z.literal(false),
    error: z.string(),
    error_code: z.string().meta({ description: 'Machine-readable reason, e.g. INSUFFICIENT_BALANCE, SENDER_NOT_FOUND' }),
    session_status: sessionStatusView.optional().meta({ description: 'With SESSION_EXPIRED' }),
    message: z.string().optional(),
    retry_after: z.int().min(1).optional(),
  }),
  campaign: z.object({
    message: z.string(),
    success: z.literal(false),
    data: z.object({ campaign_id: z.int(), status: z.string() }).optional(),
  }),
  trunk: z.object({ error: z.string() }),
};

/** A validation failure: `{message, errors: {field: [message]}}`; the chatbot style keeps `{status: false, error}` around it. */
const fieldErrors = z.record(z.string(), z.array(z.string())).meta({ description: 'Messages by field name (`tools.0.phone_number`)' });
function validationBody(style: ErrorStyle): z.ZodType {
  return style === 'status'
    ? z.object({ status: z.literal(false), error: z.string(), errors: fieldErrors })
    : z.object({ message: z.string(), errors: fieldErrors });
}

export function styleBody(style: ErrorStyle): z.ZodType {
  return styleBodies[style];
}

export interface ErrorAnswer {
  description: string;
  schema: z.ZodType;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every error status a route can answer with, and its body. Derived: 401 and 429 from its auth,
 * 400 (malformed JSON) and 422 (validation, wrong content type, body too large) from taking a
 * body or parameters, 404 from a path id, 500 everywhere. Declared by the route: the rest
 * (402, 403, 409, 503, a 404 for an id in the body, a 422 the handler raises itself).
 */
export function errorAnswers(r: Recorded): Record<string, ErrorAnswer> {
  const style = r.errorStyle;
  const own = styleBody(style);
  const out: Record<string, ErrorAnswer> = {};
  const takesBody = BODY_METHODS.has(r.method);
  if (takesBody) out['400'] = { description: 'The body is not valid JSON', schema: own };
  if (r.auth !== 'none') {
    out['401'] = {
      description: r.auth === 'required' ? 'Missing or invalid API key' : 'An Authorization header was sent and is not a valid API key',
      schema: unauthorizedBody,
    };
    out['429'] = { description: 'Rate limit exceeded (see the X-RateLimit-* and Retry-After headers)', schema: rateLimitedBody };
  }
  if (r.params) out['404'] = { description: 'Not found (another account’s resource looks the same)', schema: own };
  if (takesBody || r.params || r.query) {
    out['422'] = { description: 'Validation failure', schema: validationBody(style) };
  }
  out['500'] = { description: 'Internal error', schema: own };
  for (const [status, description] of Object.entries(r.errors)) {
    const derived = out[status];
    // A route's own 422 (INVALID_PHONE, NO_LEADS) or 429 (its own limiter) comes in its style,
    // beside the validation or per-key body the same status already has.
    const schema = derived && derived.schema !== own ? z.union([derived.schema, own]) : own;
    out[status] = { description, schema };
  }
  return out;
}
