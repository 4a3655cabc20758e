import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, type ChatWorld } from '../chat/helpers.ts';

/**
 * GET /user/conversations: an account's chat conversations (the console's list), paged, newest
 * activity first, filtered by assistant, never another account's.
 */

let w: ChatWorld;
beforeEach(async () => {
  w = await chatWorld();
});
afterEach(() => w.close());

describe('GET /user/conversations', () => {
  it('lists the account’s conversations, most recently active first, with message counts, paged and by assistant', async () => {
    const a = await w.t.account(1);
    const b = await w.t.account(1);
    const one = await w.assistant(a.key);
    const two = await w.assistant(a.key, { initial_message: '' });
    const theirs = await w.assistant(b.key);
    const first = (await w.req(a.key, 'POST', '/conversations', { assistant_id: one.uuid, type: 'test' })).body.conversation_id as string;
    const second = (await w.req(a.key, 'POST', '/conversations', { assistant_id: two.uuid, type: 'test' })).body.conversation_id as string;
    await w.req(b.key, 'POST', '/conversations', { assistant_id: theirs.uuid, type: 'test' });
    w.llm.enqueue({ content: 'We open at nine.' });
    expect((await w.req(a.key, 'POST', `/conversations/${first}/messages`, { message: 'When do you open?' })).status).toBe(200);

    const all = await w.req(a.key, 'GET', '/user/conversations');
    expect(all.status).toBe(200);
    expect(all.body.map((c: any) => c.conversation_id)).toEqual([first, second]);
    expect(all.body[0]).toMatchObject({
      assistant_id: one.id,
      type: 'test',
      status: 'active',
      ai_enabled: true,
      customer: null,
      message_count: 3,
      ended_at: null,
    });
    expect(all.body[1]).toMatchObject({ assistant_id: two.id, message_count: 0 });

    const page = await w.req(a.key, 'GET', '/user/conversations?limit=1&offset=1');
    expect(page.body.map((c: any) => c.conversation_id)).toEqual([second]);
    const byAssistant = await w.req(a.key, 'GET', `/user/conversations?assistant_id=${two.id}`);
    expect(byAssistant.body.map((c: any) => c.conversation_id)).toEqual([second]);
    const other = await w.req(a.key, 'GET', `/user/conversations?assistant_id=${theirs.id}`);
    expect(other.body).toEqual([]);
  });

  it('needs a key, and answers bad paging with the field named', async () => {
    expect((await w.req(undefined, 'GET', '/user/conversations')).status).toBe(401);
    const a = await w.t.account(1);
    const bad = await w.req(a.key, 'GET', '/user/conversations?limit=1000&assistant_id=x');
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['assistant_id', 'limit']);
  });
});
