/**
 * What live calls do, as it happens, for whoever watches an account's calls (the console's live
 * view, customers' own dashboards through GET /user/calls/events). In-process: each node
 * publishes its own calls; subscribers see the calls of the node they are connected to.
 *
 * Events name the call (record id and uuid) and carry what changed: `call` when its state
 * changes (the reader fetches the record), `transcript` with a new transcript line, `timeline`
 * with an engine event (VAD, end of turn, interruption, filler, DTMF...). Audio never goes here.
 */
import type { TranscriptEntry } from '../transcript.ts';

interface Named {
  accountId: number;
  callId: number;
  uuid: string;
}

export type LiveEvent =
  | (Named & { kind: 'call' })
  | (Named & { kind: 'transcript'; entry: TranscriptEntry })
  | (Named & { kind: 'timeline'; event: Readonly<Record<string, unknown>> & { type: string; atMs: number } });

export type LiveListener = (event: LiveEvent) => void;

export class LiveFeed {
  private readonly byAccount = new Map<number, Set<LiveListener>>();
  /** Where this node's own events also go (the other nodes of a cluster: relayLiveFeed). */
  forward: LiveListener | undefined;

  /** Calls `listener` with the account's events until the returned function is called. */
  subscribe(accountId: number, listener: LiveListener): () => void {
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byAccount.get(accountId) === set) this.byAccount.delete(accountId);
    };
  }

  subscribers(accountId: number): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }

  get totalSubscribers(): number {
    let n = 0;
    for (const set of this.byAccount.values()) n += set.size;
    return n;
  }

  /** An event of a call on this node: to its watchers here, and forwarded to the other nodes. */
  publish(event: LiveEvent): void {
    this.deliver(event);
    try {
      this.forward?.(event);
    } catch {
      // the relay logs its own failures; the call goes on
    }
  }

  /** Never throws into the call that published: a watcher's failure is the watcher's. */
  deliver(event: LiveEvent): void {
    const set = this.byAccount.get(event.accountId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch {
        // a broken subscriber unsubscribes itself on its next write; the call goes on
      }
    }
  }
}

/** The handle one call publishes through: its name filled in once. */
export interface CallLivePublisher {
  transcript(entry: TranscriptEntry): void;
  timeline(event: Readonly<Record<string, unknown>> & { type: string; atMs: number }): void;
}

export function callPublisher(feed: LiveFeed | undefined, call: { accountId: number; recordId: number; uuid: string }): CallLivePublisher | undefined {
  if (!feed) return undefined;
  const named = { accountId: call.accountId, callId: call.recordId, uuid: call.uuid };
  return {
    transcript: (entry) => feed.publish({ ...named, kind: 'transcript', entry }),
    timeline: (event) => feed.publish({ ...named, kind: 'timeline', event }),
  };
}
