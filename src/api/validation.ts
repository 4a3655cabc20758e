import type { z } from 'zod';
import { MAX_LISTED_ERRORS, ValidationError } from '../util/errors.ts';

type Issue = z.core.$ZodIssue;

/** Turns a field path into the name clients see: `tools.0.phone_number`. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'body' : path.map(String).join('.');
}

function human(field: string): string {
  return field.replace(/_/g, ' ');
}

/** How many unknown keys one message names; a body may carry thousands. */
const MAX_KEYS_NAMED = 10;

/** One readable sentence per zod issue, in the style of the spec's `{message, errors}` bodies. */
export function issueMessage(issue: Issue, field: string): string {
  const f = human(field.split('.').at(-1) ?? field);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `The ${f} field is required.`;
      if (issue.input === null) return `The ${f} field may not be null.`;
      return `The ${f} field must be ${article(issue.expected)}.`;
    case 'too_big': {
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
      return `The ${f} field must not be greater than ${String(issue.maximum)}${unit}.`;
    }
    case 'too_small': {
      if (issue.origin === 'string' && issue.minimum === 1) return `The ${f} field is required.`;
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
      return `The ${f} field must be at least ${String(issue.minimum)}${unit}.`;
    }
    case 'invalid_value':
      return `The selected ${f} is invalid (allowed: ${issue.values.map((v) => String(v)).join(', ')}).`;
    case 'unrecognized_keys': {
      const shown = issue.keys.slice(0, MAX_KEYS_NAMED).map((k) => (k.length > 64 ? `${k.slice(0, 63)}…` : k));
      const rest = issue.keys.length - shown.length;
      return `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''}.`;
    }
    case 'invalid_format':
      // A schema's own message (e.g. on .regex()) says more than the generic one.
      if (!issue.message.startsWith('Invalid')) return issue.message;
      return `The ${f} field must be a valid ${issue.format === 'regex' ? 'value' : issue.format}.`;
    default:
      return issue.message.startsWith('The ') ? issue.message : `The ${f} field ${issue.message}.`;
  }
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'object' || expected === 'array') return `an ${expected}`;
  return `a ${expected}`;
}

/**
 * The first issues as field errors, and how many more there were: a 422 lists only the first
 * MAX_LISTED_ERRORS (ValidationError), so no message is written for the thousands after them.
 */
export function zodErrors(error: z.ZodError): { errors: Record<string, string[]>; unlisted: number } {
  const errors: Record<string, string[]> = {};
  const issues = error.issues;
  const listed = Math.min(issues.length, MAX_LISTED_ERRORS);
  for (let i = 0; i < listed; i++) {
    const issue = issues[i]!;
    const field = fieldName(issue.path);
    addError(errors, field, issueMessage(issue, field));
  }
  return { errors, unlisted: issues.length - listed };
}

/** Parses with a zod schema, throwing the engine's ValidationError (422) on failure. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const res = schema.safeParse(input, { reportInput: true });
  if (!res.success) {
    const { errors, unlisted } = zodErrors(res.error);
    throw new ValidationError(errors, undefined, unlisted);
  }
  return res.data;
}

/** Adds one field error to an accumulator; rules that zod cannot express use this. */
export function addError(errors: Record<string, string[]>, field: string, message: string): void {
  // Own properties only: a field named `constructor` must not find Object's, nor `__proto__` set one.
  if (Object.hasOwn(errors, field)) errors[field]!.push(message);
  else if (field === '__proto__') Object.defineProperty(errors, field, { value: [message], enumerable: true, writable: true, configurable: true });
  else errors[field] = [message];
}

export function throwIfErrors(errors: Record<string, string[]>): void {
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}
