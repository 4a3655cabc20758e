/**
 * μ-law pass-through on a PCMU call (MulawLeg: the seam as RtpSession presents a PCMU call),
 * function-call items on reconnect, and the dualplex model's memory after a barge-in, against
 * the realtime stand-in over a real WebSocket, on the manual clock.
 */
import { describe, expect, it } from 'vitest';
import { durationMs, runRealtimeCall, say, type RealtimeRun } from './harness.ts';

type Json = Record<string, unknown>;
const GREETING = 'Hello, thanks for calling Luigi.';

/** Every audio delta the stand-in sent for `itemId`, decoded from base64, in order. */
function deltaBytes(run: RealtimeRun, itemId: string, conn = run.standIn.connections[0]!): Buffer {
  const deltas = conn.sent.filter((e) => e.type === 'response.output_audio.delta' && e.item_id === itemId);
  return Buffer.concat(deltas.map((e) => Buffer.from(String(e.delta), 'base64')));
}

/** Items with assistant audio, in the order the stand-in produced them. */
function audioItems(run: RealtimeRun, conn = run.standIn.connections[0]!): string[] {
  return [...conn.audioSentMs.keys()];
}

/** The μ-law payloads the phone heard during [fromMs, toMs]. */
function heardBetween(run: RealtimeRun, fromMs: number, toMs: number): Buffer {
  const slots = run.media.played.filter((s) => s.samples !== undefined);
  const payloads = run.leg!.heard();
  return Buffer.concat(payloads.filter((p, i): p is Uint8Array => p !== undefined && slots[i]!.atMs >= fromMs && slots[i]!.atMs <= toMs));
}

describe('μ-law pass-through (PCMU call, multimodal)', () => {
  it('negotiates audio/pcmu both ways and passes bytes through untouched in both directions', async () => {
    const run = await runRealtimeCall({
      mode: 'multimodal',
      pcmu: true,
      script: { items: [say('utt-opening-hours', 3000)], hangUpAtMs: 10_000 },
      standIn: { script: [{ say: GREETING }, { say: 'We are open from nine to five.' }], userTranscripts: ['What are your opening hours?'] },
    });
    const conn = run.standIn.connections[0]!;
    const update = run.standIn.eventsOf('session.update', conn)[0]!.session as { audio: { input: Json; output: Json } };
    expect(update.audio.input.format).toEqual({ type: 'audio/pcmu' });
    expect(update.audio.output.format).toEqual({ type: 'audio/pcmu' });
    // Caller → model: the stand-in got exactly the μ-law the phone sent, frame for frame.
    const phone = Buffer.concat(run.leg!.phoneSent);
    expect(phone.length).toBeGreaterThan(8 * 5000);
    expect(Buffer.concat(conn.appends)).toEqual(phone);
    expect(conn.appends.every((a) => a.length === 160)).toBe(true);
    // Model → phone: every byte the model sent is what the phone heard, in order (the last
    // payload of an item padded with μ-law silence to a whole 20 ms).
    const items = audioItems(run);
    expect(items).toHaveLength(2);
    const heard = heardBetween(run, 0, 10_000);
    const model = Buffer.concat(items.map((id) => {
      const b = deltaBytes(run, id);
      return Buffer.concat([b, Buffer.alloc((160 - (b.length % 160)) % 160, 0xff)]);
    }));
    expect(heard).toEqual(model);
    expect(run.result.transcript.map((e) => e.text)).toEqual([GREETING, 'What are your opening hours?', 'We are open from nine to five.']);
  });

  it('barge-in: the truncation position is exactly the μ-law that went out (160 bytes = 20 ms)', async () => {
    const long = 'Hello, thanks for calling Luigi. Today we have a special menu with fresh pasta, grilled fish and a lemon tart for dessert.';
    const run = await runRealtimeCall({
      mode: 'multimodal',
      pcmu: true,
      script: { items: [say('utt-book-table', 2000)], hangUpAtMs: 9000 },
      standIn: { script: [{ say: long }, { say: 'Sure, for how many?' }], userTranscripts: ['I would like to book a table.'] },
    });
    const conn = run.standIn.connections[0]!;
    const cut = run.events('interruption')[0]!;
    const truncation = conn.truncations[0]!;
    const heard = heardBetween(run, 0, cut.atMs);
    expect(truncation.audioEndMs).toBe((heard.length / 160) * 20);
    expect(truncation.audioEndMs).toBe(run.playedMsBetween(0, cut.atMs));
    expect(truncation.audioEndMs).toBeLessThan(conn.audioSentMs.get(truncation.itemId)!);
    // What was heard is the model's audio from its first byte, untouched.
    expect(heard).toEqual(deltaBytes(run, truncation.itemId).subarray(0, heard.length));
    // Nothing of it after the cut (one slot of grace), and the model forgot the rest.
    const reply = run.events('assistant-audio-start').find((e) => e.atMs > cut.atMs)!;
    expect(run.playedMsBetween(cut.atMs + 21, reply.atMs - 1)).toBe(0);
    const remembered = conn.conversation.find((i) => i.id === truncation.itemId)!;
    expect(remembered.content).toEqual([{ type: 'output_audio', transcript: null, truncated_at_ms: truncation.audioEndMs }]);
    expect(long.startsWith(run.result.transcript[0]!.text)).toBe(true);
    expect(run.result.transcript.at(-1)).toMatchObject({ text: 'Sure, for how many?' });
  });

  it('a call without pass-through (virtual media, no codec) stays on 24 kHz PCM', async () => {
    const run = await runRealtimeCall({ mode: 'multimodal', script: { items: [], hangUpAtMs: 1000 }, standIn: { script: [{ say: 'Hi.' }] } });
    const update = run.standIn.eventsOf('session.update')[0]!.session as { audio: { input: Json; output: Json } };
    expect(update.audio.input.format).toEqual({ type: 'audio/pcm', rate: 24000 });
    expect(update.audio.output.format).toEqual({ type: 'audio/pcm', rate: 24000 });
  });
});

describe('reconnect replays function calls', () => {
  it('the new connection gets function_call and function_call_output items, with their call_id, in order', async () => {
    const checkTable = {
      spec: { name: 'check_table', description: 'Is a table free?', parameters: { type: 'object', properties: { party: { type: 'number' } } } },
      run: async () => ({ free: true, time: '19:30' }),
    };
    const run = await runRealtimeCall({
      mode: 'multimodal',
      pcmu: true,
      config: { wait_for_customer: true },
      script: { items: [say('utt-book-table', 500)], hangUpAtMs: 14_000 },
      deps: { tools: { extraTools: [checkTable] } },
      standIn: {
        script: [
          { say: 'Let me check.', calls: [{ name: 'check_table', arguments: { party: 2 }, callId: 'call_1' }] },
          { say: 'Yes, a table is free at half past seven, shall I book it?', dropAfterDeltas: 2 },
          { say: 'Shall I book the table at half past seven?' },
        ],
        userTranscripts: ['I would like to book a table for two.'],
      },
    });
    expect(run.standIn.connections).toHaveLength(2);
    const second = run.standIn.connections[1]!;
    const seeded = run.standIn.eventsOf('conversation.item.create', second).map((e) => e.item as Json);
    const shape = seeded.map((i) => (i.type === 'message' ? [i.role, (i.content as { text: string }[])[0]!.text] : [i.type, i.call_id, i.name ?? i.output, i.arguments]));
    expect(shape.slice(0, 4)).toEqual([
      ['user', 'I would like to book a table for two.'],
      ['assistant', 'Let me check.'],
      ['function_call', 'call_1', 'check_table', JSON.stringify({ party: 2 })],
      ['function_call_output', 'call_1', JSON.stringify({ free: true, time: '19:30' }), undefined],
    ]);
    // Then the answer to the result, as far as it had arrived when the socket dropped.
    expect(shape.length).toBeLessThanOrEqual(5);
    if (shape[4]) expect('Yes, a table is free at half past seven, shall I book it?'.startsWith(String(shape[4][1]))).toBe(true);
    // The stand-in refuses an output whose call is not in the conversation: none was refused.
    expect(second.sent.filter((e) => e.type === 'error')).toEqual([]);
    expect(second.conversation.map((i) => i.type)).toEqual(expect.arrayContaining(['function_call', 'function_call_output']));
    expect(run.result.counters.reconnects).toBe(1);
    expect(run.result.transcript.at(-1)).toMatchObject({ speaker: 'assistant', text: 'Shall I book the table at half past seven?' });
    // The caller's audio kept going to the model on both connections, untouched.
    const sentToModel = Buffer.concat(run.standIn.connections.flatMap((c) => c.appends));
    expect(Buffer.concat(run.leg!.phoneSent).includes(sentToModel.subarray(0, 8000))).toBe(true);
  });
});

describe('dualplex memory after a barge-in', () => {
  it("replaces the model's text item with the words the caller heard", async () => {
    const long = 'Today we have a special menu. There is fresh pasta and grilled fish. For dessert there is a lemon tart with cream.';
    const run = await runRealtimeCall({
      mode: 'dualplex',
      config: { wait_for_customer: true },
      script: { items: [say('utt-opening-hours', 300), say('utt-book-table', 5000)], hangUpAtMs: 14_000 },
      standIn: { script: [{ say: long }, { say: 'Sure, for how many?' }], userTranscripts: ['What is on the menu?', 'I would like to book a table.'] },
    });
    const conn = run.standIn.connections[0]!;
    const cut = run.events('interruption')[0]!;
    const start = run.events('assistant-audio-start').find((e) => e.key === cut.key)!;
    // The heard words come from the frames that really went out before the cut.
    expect(cut.sentMs).toBe(run.playedMsBetween(start.atMs, cut.atMs));
    expect(cut.heard.length).toBeGreaterThan(0);
    expect(long.startsWith(cut.heard)).toBe(true);
    expect(cut.heard.length).toBeLessThan(long.length);
    const answer = run.result.transcript.find((e) => e.speaker === 'assistant')!;
    expect(answer.text).toBe(cut.heard);
    // On the wire: the heard part inserted right after the model's text item, then that item deleted.
    const textItem = conn.sent.find((e) => e.type === 'response.output_text.delta')!.item_id as string;
    const replaced = run.events('item-replaced')[0]!;
    expect(replaced).toMatchObject({ itemId: textItem, heard: cut.heard });
    const creates = run.standIn.eventsOf('conversation.item.create', conn);
    const insert = creates.find((e) => e.previous_item_id === textItem)!;
    expect(insert.item).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: cut.heard }] });
    expect(run.standIn.eventsOf('conversation.item.delete', conn)).toEqual([expect.objectContaining({ item_id: textItem })]);
    expect(conn.deleted).toEqual([textItem]);
    expect(conn.sent.filter((e) => e.type === 'error')).toEqual([]);
    // What the model now remembers of that answer: the heard words, where the answer was.
    const remembered = conn.conversation.filter((i) => i.role === 'assistant').map((i) => (i.content as { text?: string }[])[0]?.text);
    expect(remembered).not.toContain(long);
    expect(remembered[0]).toBe(cut.heard);
    const order = conn.conversation.map((i) => (i.role === 'user' ? 'user' : (i.content as { text?: string }[])[0]?.text));
    expect(order.indexOf(cut.heard)).toBe(1);
    expect(durationMs('utt-book-table')).toBeGreaterThan(0);
  });
});
