import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addError, parseWith } from '../../../src/api/validation.ts';
import { ValidationError } from '../../../src/util/errors.ts';

function errorsOf(schema: z.ZodType, input: unknown): Record<string, string[]> {
  try {
    parseWith(schema, input);
  } catch (e) {
    if (e instanceof ValidationError) return e.errors;
    throw e;
  }
  throw new Error('expected a validation error');
}

describe('validation messages', () => {
  const schema = z.object({
    name: z.string().max(5),
    count: z.number().int().min(1),
    code: z.string().regex(/^[a-z]+$/, 'The code may only hold lowercase letters.'),
    kind: z.enum(['a', 'b']),
    items: z.array(z.object({ phone: z.string() })),
  });

  it('tells a missing field from a wrong type', () => {
    const errors = errorsOf(schema, { name: 5, code: 'x', kind: 'a', items: [] });
    expect(errors.name).toEqual(['The name field must be a string.']);
    expect(errors.count).toEqual(['The count field is required.']);
  });

  it('names bounds, enums, nested paths and custom messages', () => {
    const errors = errorsOf(schema, { name: 'toolong', count: 0, code: 'ABC', kind: 'c', items: [{ phone: 1 }] });
    expect(errors.name).toEqual(['The name field must not be greater than 5 characters.']);
    expect(errors.count).toEqual(['The count field must be at least 1.']);
    expect(errors.code).toEqual(['The code may only hold lowercase letters.']);
    expect(errors.kind?.[0]).toContain('allowed: a, b');
    expect(errors['items.0.phone']).toEqual(['The phone field must be a string.']);
  });
});

describe('a 422 with thousands of errors', () => {
  it('lists the first 20 messages and counts all of them in its message', () => {
    const errors = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, [`The k${i} field is not known.`]]));
    const err = new ValidationError(errors);
    expect(Object.values(err.errors).flat()).toHaveLength(20);
    expect(Object.keys(err.errors)).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`));
    expect(err.total).toBe(5_000);
    expect(err.message).toBe('The k0 field is not known. (and 4,999 more errors; the first 20 are listed)');
    expect(JSON.stringify({ message: err.message, errors: err.errors }).length).toBeLessThan(2_000);
  });

  it('counts messages a producer left out (unlisted) and those of one field alike', () => {
    const err = new ValidationError({ parameters: Array.from({ length: 30 }, (_, i) => `problem ${i}`) }, undefined, 5);
    expect(err.errors.parameters).toHaveLength(20);
    expect(err.total).toBe(35);
    expect(err.message).toBe('problem 0 (and 34 more errors; the first 20 are listed)');
    // Below the cap, the message is as before.
    expect(new ValidationError({ a: ['one'], b: ['two'] }).message).toBe('one (and 1 more error)');
    expect(new ValidationError({ a: ['one'] }).message).toBe('one');
  });

  it('parseWith writes messages for the first issues only, counting the rest', () => {
    const schema = z.object({ headers: z.record(z.string(), z.string()) });
    let err: ValidationError | undefined;
    try {
      parseWith(schema, { headers: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`h${i}`, i])) });
    } catch (e) {
      err = e as ValidationError;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect(Object.keys(err!.errors)).toHaveLength(20);
    expect(err!.errors['headers.h0']).toEqual(['The h0 field must be a string.']);
    expect(err!.total).toBe(5_000);
  });

  it('cuts huge field names and messages, and names at most 10 unknown keys in one message', () => {
    const long = 'x'.repeat(100_000);
    const err = new ValidationError({ [long]: [`The ${long} field is not known.`] });
    const [[field, [message]]] = Object.entries(err.errors) as [[string, string[]]];
    expect(field.length).toBeLessThanOrEqual(100);
    expect(message!.length).toBeLessThanOrEqual(500);
    const keys = errorsOf(z.strictObject({}), Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`q${i}`, 1])));
    expect(keys.body).toEqual(['Unknown fields: q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 and 1990 more.']);
  });

  it('a field named like an Object.prototype member is a field like any other', () => {
    const err = new ValidationError({ constructor: ['c'], toString: ['t'], ['__proto__']: ['p'] } as Record<string, string[]>);
    expect(JSON.parse(JSON.stringify(err.errors))).toEqual(JSON.parse('{"constructor":["c"],"toString":["t"],"__proto__":["p"]}'));
    const errors: Record<string, string[]> = {};
    addError(errors, 'constructor', 'one');
    addError(errors, 'constructor', 'two');
    addError(errors, '__proto__', 'three');
    expect(errors.constructor).toEqual(['one', 'two']);
    expect(Object.getPrototypeOf(errors)).toBe(Object.prototype);
    expect(Object.keys(errors)).toEqual(['constructor', '__proto__']);
  });
});
