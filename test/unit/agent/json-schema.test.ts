import { describe, expect, it } from 'vitest';
import { validateJson } from '../../../src/agent/json-schema.ts';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 5 },
    count: { type: 'integer', minimum: 1, maximum: 3 },
    kind: { enum: ['a', 'b'] },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
    nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
    maybe: { type: ['string', 'null'] },
  },
  required: ['name'],
};

describe('validateJson', () => {
  it('accepts a valid value', () => {
    expect(validateJson(schema, { name: 'abc', count: 2, kind: 'a', tags: ['x'], nested: { ok: true }, maybe: null })).toEqual([]);
  });

  it('reports every problem with its path', () => {
    expect(validateJson(schema, { count: 1.5, kind: 'c', tags: ['x', 1, 'z'], nested: { extra: 1 }, maybe: 3 })).toEqual([
      'name is required',
      'count must be integer',
      'kind must be one of "a", "b"',
      'tags must have at most 2 items',
      'tags[1] must be string',
      'nested.ok is required',
      'nested.extra is not an allowed property',
      'maybe must be string or null',
    ]);
    expect(validateJson(schema, { name: 'a', count: 9 })).toEqual(['name must have at least 2 characters', 'count must be <= 3']);
    expect(validateJson(schema, [])).toEqual(['arguments must be object']);
  });
});
