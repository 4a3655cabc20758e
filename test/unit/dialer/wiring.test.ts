import { describe, expect, it } from 'vitest';
import { outcomeOf } from '../../../src/campaigns/wiring.ts';

describe('campaign call outcome from the call record', () => {
  it('maps statuses and the voicemail verdict', () => {
    expect(outcomeOf({ status: 'completed', details: null })).toBe('completed');
    expect(outcomeOf({ status: 'completed', details: { voicemail: { verdict: 'person' } } })).toBe('completed');
    expect(outcomeOf({ status: 'completed', details: { voicemail: { verdict: 'voicemail', action: 'message' } } })).toBe('voicemail');
    expect(outcomeOf({ status: 'busy', details: null })).toBe('busy');
    expect(outcomeOf({ status: 'declined', details: null })).toBe('busy');
    expect(outcomeOf({ status: 'no-answer', details: null })).toBe('no-answer');
    expect(outcomeOf({ status: 'invalid-number', details: null })).toBe('failed');
    expect(outcomeOf({ status: 'canceled', details: null })).toBe('failed');
    expect(outcomeOf(undefined)).toBe('failed');
  });
});
