import type { Logger } from 'pino';
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
  /** AI provider requests and first-byte latency on /metrics; absent: not measured (tests). */
  providerMetrics?: ProviderMetrics;
  /**
   * What this node shares with the other nodes of the service (rate limits, call slots, bans,
   * commands; src/cluster). Absent: this process alone, in memory (tests, one node).
   */
  cluster?: Cluster;
}
