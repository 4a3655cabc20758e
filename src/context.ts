import type { Logger } from 'pino';
import { LiveFeed } from './call/live/live-feed.ts';
import type { CallSession } from './call/call-session.ts';
import type { Config } from './config.ts';
import type { Store, Repos } from './store/index.ts';
import type { Clock } from './util/clock.ts';
import type { SecretBox } from './store/secrets.ts';
import type { Catalog } from './catalog/catalog.ts';
import type { TrunkRegistry } from './sip/trunk-registry.ts';
import type { CampaignRunner } from './campaigns/state.ts';
import type { OutboundCallPlacer } from './call/outbound-dialer.ts';
import type { Outbound } from './net/outbound/index.ts';
import type { ProviderMetrics } from './telemetry/provider-metrics.ts';
import type { RecordingStorage } from './blobs/recording-storage.ts';
import type { Cluster } from './cluster/types.ts';

/**
 * What the composition root hands to each part: built once in main.ts (or a test), never a
 * global. Parts take the fields they need.
 */
export interface AppContext {
  config: Readonly<Config>;
  store: Store;
  repos: Repos;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  /** Languages, models, providers and voices (built-in, or SWITCHBOARD_CATALOG). */
  catalog: Catalog;
  /** Provisioned SIP trunks (REST creates them, the SIP layer routes by them). */
  trunks: TrunkRegistry;
  /** Runs campaign calls; absent means the no-op runner (no dialer yet). */
  campaignRunner?: CampaignRunner;
  /** Places outbound calls (POST /user/calls); absent until the SIP server is up. */
  dialer?: OutboundCallPlacer;
  /**
   * The guard for URLs customers give; absent: built from `config.outbound` (reach it through
   * `outboundOf(ctx)`). Tests set one to play DNS.
   */
  outbound?: Outbound;
  /** Whether this node drains (SIGTERM): /readyz answers 503 then; absent: always ready. */
  readiness?: () => { draining: boolean };
  /**
   * The lease under which this node runs the sweeps for the whole cluster (docs/WORK-ONCE.md);
   * absent: this node sweeps (a single node, tests).
   */
  sweepLease?: { readonly held: boolean };
  /** AI provider requests and first-byte latency on /metrics; absent: not measured (tests). */
  providerMetrics?: ProviderMetrics;
  /** Live calls' events for watchers (GET /user/calls/events); reach it through `liveFeedOf(ctx)`. */
  liveFeed?: LiveFeed;
  /** The calls this node holds now (hang-up, the feed's first snapshot); absent until SIP is up. */
  liveCalls?: LiveCalls;
  /**
   * Recordings and call tapes: served, archived to the bucket (SWITCHBOARD_S3_*), deleted; absent:
   * the data dir's files only (reach it through `recordingsOf(ctx)`).
   */
  recordings?: RecordingStorage;
  /**
   * What this node shares with the other nodes of the service (rate limits, call slots, bans,
   * commands; src/cluster). Absent: this process alone, in memory (tests, one node).
   */
  cluster?: Cluster;
}

/** The calls running on this node, by uuid. */
export interface LiveCalls {
  get(uuid: string): CallSession | undefined;
  list(): CallSession[];
  /** Ends a call held by another node of the service (src/cluster); absent: this node only. */
  hangup?(uuid: string): Promise<'here' | 'sent' | 'not-found'>;
}

/** The context's live feed, made on first use so every part that asks shares one. */
export function liveFeedOf(ctx: AppContext): LiveFeed {
  return (ctx.liveFeed ??= new LiveFeed());
}
