import { describe, expect, it } from 'vitest';
import { ftsQuery } from '../../src/store/repos/knowledge-bases.ts';

describe('ftsQuery', () => {
  it('quotes every word and joins with OR', () => {
    expect(ftsQuery('What are your opening hours?')).toBe('"what" OR "are" OR "your" OR "opening" OR "hours"');
  });
  it('neutralizes FTS5 syntax', () => {
    expect(ftsQuery('title:secret AND "x NOT (y* OR ^z) NEAR(a b)')).toBe('"title" OR "secret" OR "and" OR "x" OR "not" OR "y" OR "or" OR "z" OR "near" OR "a" OR "b"');
  });
  it('keeps letters of every script and drops duplicates', () => {
    expect(ftsQuery('Öffnungszeiten öffnungszeiten 営業')).toBe('"öffnungszeiten" OR "営業"');
  });
  it('is empty without words', () => {
    expect(ftsQuery('?!* ""')).toBe('');
  });
});
