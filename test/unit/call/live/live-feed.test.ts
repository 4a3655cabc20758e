import { describe, expect, it } from 'vitest';
import { callPublisher, LiveFeed, type LiveEvent } from '../../../../src/call/live/live-feed.ts';

describe('LiveFeed', () => {
  it('delivers an account’s events to its subscribers only, until they unsubscribe', () => {
    const feed = new LiveFeed();
    const a: LiveEvent[] = [];
    const b: LiveEvent[] = [];
    const offA = feed.subscribe(1, (e) => a.push(e));
    feed.subscribe(2, (e) => b.push(e));
    const live = callPublisher(feed, { accountId: 1, recordId: 10, uuid: 'u1' })!;
    live.transcript({ speaker: 'caller', text: 'hi', startMs: 0, endMs: 500 });
    live.timeline({ type: 'vad-speech-start', atMs: 0 });
    expect(a.map((e) => e.kind)).toEqual(['transcript', 'timeline']);
    expect(a[0]).toMatchObject({ accountId: 1, callId: 10, uuid: 'u1' });
    expect(b).toEqual([]);
    offA();
    expect(feed.subscribers(1)).toBe(0);
    live.timeline({ type: 'vad-speech-end', atMs: 900 });
    expect(a).toHaveLength(2);
  });

  it('a throwing subscriber never reaches the call that published, nor the other subscribers', () => {
    const feed = new LiveFeed();
    const got: string[] = [];
    feed.subscribe(1, () => {
      throw new Error('broken watcher');
    });
    feed.subscribe(1, (e) => got.push(e.kind));
    expect(() => feed.publish({ kind: 'call', accountId: 1, callId: 1, uuid: 'u' })).not.toThrow();
    expect(got).toEqual(['call']);
  });

  it('no feed, no publisher', () => {
    expect(callPublisher(undefined, { accountId: 1, recordId: 1, uuid: 'u' })).toBeUndefined();
  });
});
