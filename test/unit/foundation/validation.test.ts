import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseWith } from '../../../src/api/validation.ts';
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
