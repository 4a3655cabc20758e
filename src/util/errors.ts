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

/** Field-level validation failure: REST answers 422 `{message, errors}`. */
export class ValidationError extends AppError {
  constructor(readonly errors: Record<string, string[]>, message?: string) {
    super(message ?? firstMessage(errors), 422, 'VALIDATION_FAILED');
  }
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

function firstMessage(errors: Record<string, string[]>): string {
  const all = Object.values(errors).flat();
  if (all.length === 0) return 'The given data was invalid.';
  return all.length === 1 ? all[0]! : `${all[0]} (and ${all.length - 1} more error${all.length > 2 ? 's' : ''})`;
}
