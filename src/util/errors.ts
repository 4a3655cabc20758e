/**
 * The few error classes the engine throws. Each carries machine-readable fields; the REST layer
 * maps them to the exact bodies of the spec in one place (src/api/errors.ts).
 */
export class AppError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly retryable = false,
    /** Fields some endpoints add to the error body (e.g. `data`, `session_status`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Field-level validation failure: REST answers 422 `{message, errors}`. A body can hold any number
 * of mistakes (80,000 unknown keys fit in the 1 MB body limit), so `errors` lists the first
 * MAX_LISTED_ERRORS messages, each field name and message cut to a readable length, and
 * `message` says how many there were in all: "The name field is required. (and 79,999 more
 * errors; the first 20 are listed)". The shape stays the spec's `{field: [string]}`.
 */
export class ValidationError extends AppError {
  readonly errors: Record<string, string[]>;
  /** Every message, listed or not. */
  readonly total: number;

  /** `unlisted`: messages the caller already left out of `errors`, counted in the total. */
  constructor(errors: Record<string, string[]>, message?: string, unlisted = 0) {
    const listed = listFirst(errors);
    const total = listed.total + unlisted;
    super(message ?? summary(listed.errors, total), 422, 'VALIDATION_FAILED');
    this.errors = listed.errors;
    this.total = total;
  }
}

export const MAX_LISTED_ERRORS = 20;
const MAX_FIELD_CHARS = 100;
const MAX_MESSAGE_CHARS = 500;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The first messages in field order, and how many there were; one pass, nothing copied past the cap. */
function listFirst(errors: Record<string, string[]>): { errors: Record<string, string[]>; total: number } {
  // A Map, then own data properties: a field named `constructor` or `__proto__` stays a field.
  const listed = new Map<string, string[]>();
  let total = 0;
  let kept = 0;
  for (const [field, messages] of Object.entries(errors)) {
    total += messages.length;
    for (const m of messages) {
      if (kept === MAX_LISTED_ERRORS) break;
      const name = cut(field, MAX_FIELD_CHARS);
      const list = listed.get(name) ?? [];
      if (list.length === 0) listed.set(name, list);
      list.push(cut(m, MAX_MESSAGE_CHARS));
      kept++;
    }
  }
  return { errors: Object.fromEntries(listed), total };
}

export class NotFoundError extends AppError {
  constructor(what: string, code = 'NOT_FOUND') {
    super(`${what} not found`, 404, code);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(message, 409, 'CONFLICT');
  }
}

export class ProviderError extends AppError {
  constructor(message: string, readonly provider: string, retryable = true) {
    super(message, 502, 'PROVIDER_FAILED', retryable);
  }
}

function summary(listed: Record<string, string[]>, total: number): string {
  const first = Object.values(listed)[0]?.[0];
  if (first === undefined) return 'The given data was invalid.';
  if (total === 1) return first;
  const more = `and ${(total - 1).toLocaleString('en-US')} more error${total > 2 ? 's' : ''}`;
  return total > MAX_LISTED_ERRORS ? `${first} (${more}; the first ${MAX_LISTED_ERRORS} are listed)` : `${first} (${more})`;
}
