/** The stand-in itself behaves like the real server where engine tests depend on it. */
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { RealtimeStandIn } from '../../support/realtime-stand-in.ts';

type Json = Record<string, unknown>;
let standIn: RealtimeStandIn;
let ws: WebSocket | undefined;
afterEach(async () => {
  ws?.terminate();
  await standIn.close();
});

async function raw(): Promise<{ send: (e: Json) => void; next: (type: string) => Promise<Json> }> {
  const sock = new WebSocket(`${standIn.baseUrl}/realtime?model=gpt-realtime`, { headers: { Authorization: `Bearer ${standIn.apiKey}` } });
  ws = sock;
  const inbox: Json[] = [];
  sock.on('message', (d) => inbox.push(JSON.parse(d.toString()) as Json));
  await new Promise((r) => sock.once('open', r));
  return {
    send: (e) => sock.send(JSON.stringify(e)),
    next: async (type) => {
      await standIn.waitFor(() => inbox.some((e) => e.type === type));
      return inbox.splice(inbox.findIndex((e) => e.type === type), 1)[0]!;
    },
  };
}

describe('realtime stand-in', () => {
  it('greets with session.created and enforces the GA session shape', async () => {
    standIn = await RealtimeStandIn.start({ audio: 'tone' });
    const c = await raw();
    expect((await c.next('session.created')).session).toMatchObject({ type: 'realtime', model: 'gpt-realtime' });
    c.send({ type: 'session.update', session: { instructions: 'x' } });
    expect((await c.next('error')).error).toMatchObject({ code: 'missing_required_parameter' });
    c.send({ type: 'session.update', session: { type: 'realtime', audio: { output: { voice: 'ash' } } } });
    const s = (await c.next('session.updated')).session as { audio: { output: Json; input: Json } };
    expect(s.audio.output).toEqual({ format: { type: 'audio/pcm', rate: 24000 }, voice: 'ash' });
    expect(s.audio.input.turn_detection).toMatchObject({ type: 'server_vad' });
  });

  it('rejects what the real server rejects: unknown events, empty commits, bad truncations, overlapping responses', async () => {
    standIn = await RealtimeStandIn.start({ audio: 'tone', deltaIntervalMs: 20, script: [{ say: 'A reply long enough to overlap.' }] });
    const c = await raw();
    c.send({ type: 'made.up' });
    expect((await c.next('error')).error).toMatchObject({ code: 'invalid_type' });
    c.send({ type: 'input_audio_buffer.commit' });
    expect((await c.next('error')).error).toMatchObject({ code: 'input_audio_buffer_commit_empty' });
    c.send({ type: 'response.create' });
    const delta = await c.next('response.output_audio.delta');
    c.send({ type: 'response.create' });
    expect((await c.next('error')).error).toMatchObject({ code: 'conversation_already_has_active_response' });
    c.send({ type: 'conversation.item.truncate', item_id: delta.item_id, content_index: 0, audio_end_ms: 60_000 });
    expect((await c.next('error')).error).toMatchObject({ code: 'invalid_value' });
    c.send({ type: 'response.cancel' });
    expect((await c.next('response.done')).response).toMatchObject({ status: 'cancelled', status_details: { reason: 'client_cancelled' } });
    expect(standIn.last.truncations).toEqual([]);
  });

  it('keeps the conversation: inserts after previous_item_id, deletes, refuses orphan function outputs', async () => {
    standIn = await RealtimeStandIn.start({ audio: 'tone' });
    const c = await raw();
    await c.next('session.created');
    const msg = (id: string, text: string): Json => ({ id, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
    c.send({ type: 'conversation.item.create', item: msg('a', 'one') });
    c.send({ type: 'conversation.item.create', item: msg('c', 'three') });
    c.send({ type: 'conversation.item.create', previous_item_id: 'a', item: msg('b', 'two') });
    expect(await c.next('conversation.item.added')).toMatchObject({ previous_item_id: null, item: { id: 'a' } });
    c.send({ type: 'conversation.item.create', previous_item_id: 'nope', item: msg('x', 'lost') });
    expect((await c.next('error')).error).toMatchObject({ code: 'item_not_found' });
    c.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_9', output: '{}' } });
    expect((await c.next('error')).error).toMatchObject({ code: 'invalid_value' });
    c.send({ type: 'conversation.item.create', item: { type: 'function_call', call_id: 'call_9', name: 'f', arguments: '{}' } });
    c.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_9', output: '{"ok":true}' } });
    c.send({ type: 'conversation.item.delete', item_id: 'c' });
    expect(await c.next('conversation.item.deleted')).toMatchObject({ item_id: 'c' });
    c.send({ type: 'conversation.item.delete', item_id: 'c' });
    expect((await c.next('error')).error).toMatchObject({ code: 'item_not_found' });
    expect(standIn.last.conversation.map((i) => i.id ?? i.type)).toEqual(['a', 'b', expect.any(String), expect.any(String)]);
    expect(standIn.last.conversation.slice(2).map((i) => i.type)).toEqual(['function_call', 'function_call_output']);
    expect(standIn.last.functionOutputs).toEqual([{ callId: 'call_9', output: '{"ok":true}' }]);
    expect(standIn.last.deleted).toEqual(['c']);
  });
});
