/**
 * A failed text turn whose error is not a provider's (a bug, a store failure) is told to the
 * caller as a fixed "internal error", never with its message; the server's log keeps it, scrubbed.
 */
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { chatFailureDetail, describeChatFailure } from '../../../src/chat/provider-failure.ts';

const ctx = { config: { openai: { apiKey: 'sk-abcdefSECRET1234' }, deepgram: {} } } as unknown as AppContext;

describe('chat failure text', () => {
  it('a non-provider error: fixed text for the caller, the scrubbed message for the log', () => {
    const err = new Error('SQLITE_CORRUPT at /var/lib/switchboard/db.sqlite via http://u:p@10.0.0.5:9000/x?k=sk-abcdefSECRET1234');
    expect(describeChatFailure(ctx, err)).toBe('internal error');
    expect(chatFailureDetail(ctx, err)).toBe('internal error: SQLITE_CORRUPT at /var/lib/switchboard/db.sqlite via http://10.0.0.5:9000');
  });
});
