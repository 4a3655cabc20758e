/**
 * The engine's SIP edge: one UserAgent on SIP_HOST:SIP_PORT (UDP and TCP, and TLS on
 * SIP_TLS_PORT when a certificate is configured) that writes SIP_PUBLIC_HOST into Via, Contact
 * and SDP; the abuse guard in front of the transport and the transaction layer; inbound INVITEs
 * through routing, the new-call rate limits and admission (src/call/inbound-calls.ts);
 * registrations of `auth` trunks; and the outbound dialer. `close()` drains calls, unregisters,
 * releases ports.
 */
import type { LiveFeed } from '../call/live/live-feed.ts';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import type client from 'prom-client';
import { CALL_CAP_DEFAULTS, SIP_TCP_DEFAULTS, defaultBurst, type Config, type SipTcpConfig } from '../config.ts';
import { CALL_PRICE_PER_MINUTE_MICROS } from '../billing/prices.ts';
import { CallRecorder } from '../call/call-record.ts';
import { CallRegistry, DRAIN_RETRY_AFTER_S } from '../call/call-registry.ts';
import type { CallEngine, CallEnv, CallLimits } from '../call/call-env.ts';
import { handleInboundInvite, type InboundGate } from '../call/inbound-calls.ts';
import { CallRateLimiter, retryAfterSeconds, type CallRate, type RateVerdict } from '../call/call-rate-limit.ts';
import { OutboundDialer } from '../call/outbound-dialer.ts';
import { PortPool } from '../media/port-pool.ts';
import { rtpIoFor } from '../media/rtp-io/index.ts';
import type { RtpIo } from '../media/rtp-io/types.ts';
import { RtpSession } from '../media/rtp-session.ts';
import type { Repos } from '../store/index.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import { DrainPlan, settleBy } from '../util/drain-plan.ts';
import { AbuseGuard, type AbuseGuardOptions } from './abuse-guard.ts';
import type { Cluster, Envelope } from '../cluster/types.ts';
import { countOpenFds, FD_BUDGET_RULE, planFds, readSoftFdLimit } from './fd-budget.ts';
import { TcpAdmission, type FdBudget } from './tcp-admission.ts';
import { LoopLag, type LoopDelayMonitor } from './loop-lag.ts';
import { RegistrationManager, type RegistrationManagerOptions } from './registration-manager.ts';
import type { TimerConfig } from './transaction-types.ts';
import { TrustedProxies } from './trusted-proxies.ts';
import { TrunkAuthenticator } from './trunk-auth.ts';
import type { TrunkRegistry } from './trunk-registry.ts';
import type { SipDns } from './locate.ts';
import { createSipMetrics, type SipMetrics } from './sip-metrics.ts';
import { createCallMetrics } from '../telemetry/call-metrics.ts';
import { UserAgent } from './user-agent.ts';
import { SipTls } from './tls/tls-streams.ts';

export interface SipServerOptions {
  /** `sip.tcp` absent: the SIP_TCP_* defaults. */
  /** `nodeId`: SWITCHBOARD_NODE_ID, written on every call record (none: records carry no node). */
  config: Readonly<{ sip: Omit<Config['sip'], 'tcp'> & { tcp?: SipTcpConfig }; rtp: Config['rtp']; nodeId?: string }>;
  repos: Repos;
  trunks: TrunkRegistry;
  logger: Logger;
  /** Timers, media pacing and SIP (default: the system clock). */
  clock?: Clock;
  /** Timestamps on call records (the store's clock; default `clock`). */
  recordClock?: Clock;
  /** Live-call caps per account and per trunk, and the rest of CallLimits (default DEFAULT_LIMITS). */
  limits?: Partial<CallLimits>;
  /** When to refuse new INVITEs with 503 because this process is overloaded (default DEFAULT_OVERLOAD). */
  overload?: Partial<OverloadOptions>;
  abuse?: Partial<Omit<AbuseGuardOptions, 'clock' | 'trusted'>>;
  /** New-call rates per trunk and for the process (default DEFAULT_CALL_RATE). */
  callRate?: Partial<CallRates>;
  /** Where the SIP counters (bans, malformed input, rate-limited calls) are served; none by default. */
  metricsRegistry?: client.Registry;
  /** Watchers of live calls (GET /user/calls/events) hear of calls starting and ending. */
  liveFeed?: LiveFeed;
  timers?: Partial<TimerConfig>;
  /** Where RFC 3263's NAPTR, SRV and address queries go (default: the system's resolver). */
  dns?: SipDns;
  /** No inbound RTP for this long hangs up (default 30 s). */
  rtpTimeoutMs?: number;
  registration?: Partial<Omit<RegistrationManagerOptions, 'ua' | 'trunks' | 'clock' | 'logger'>>;
  /** A shared pool (tests check it for leaks); default one over RTP_PORT_MIN..MAX. */
  portPool?: PortPool;
  /** Where the default pool's RTP sockets live (default: by SWITCHBOARD_RTP_THREAD, see rtpIoFor). */
  rtpIo?: RtpIo;
  engine?: CallEngine;
  /** Ring before answering inbound calls (default 0). */
  answerDelayMs?: number;
  /**
   * The service this node belongs to (src/cluster): live-call caps count every node's calls, a ban
   * here drops the source on every node, a hang-up reaches the node holding the call. Default:
   * this process alone.
   */
  cluster?: Cluster;
}

export const DEFAULT_LIMITS: CallLimits = {
  maxPerAccount: CALL_CAP_DEFAULTS.maxPerAccount,
  maxPerTrunk: CALL_CAP_DEFAULTS.maxPerTrunk,
  minBalanceMicros: CALL_PRICE_PER_MINUTE_MICROS,
  diagnosticsMaxMs: 300_000,
};

/**
 * Overload shedding: new INVITEs are answered 503 with Retry-After, before any store work or
 * port allocation, while this process cannot take another call. A carrier then fails over to
 * another engine at once instead of waiting out timeouts on a saturated one. In-dialog requests
 * (re-INVITE, BYE) are never shed.
 */
export interface OverloadOptions {
  /** Live calls in this process (all accounts and trunks) beyond which new INVITEs are shed. */
  maxLiveCalls: number;
  /**
   * Event-loop delay p99 above which new INVITEs are shed, when it held for each of the last two
   * whole seconds (one stall from a GC or a slow query is not overload); 0 turns the check off.
   */
  maxLoopDelayMs: number;
  /** Retry-After (seconds) on the 503. */
  retryAfterS: number;
  /** Where the delay is read (default: this process's event loop, src/sip/loop-lag.ts). */
  loopMonitor?: LoopDelayMonitor;
}

/**
 * The media loop of every call runs on the event-loop thread, which saturates at about 140
 * G.711 echo calls on 2 cores (docs/bench-history.md); the lag check sheds well before calls
 * degrade audibly, the call cap is a backstop above the per-account and per-trunk caps.
 */
export const DEFAULT_OVERLOAD: OverloadOptions = {
  maxLiveCalls: CALL_CAP_DEFAULTS.maxLiveCalls,
  maxLoopDelayMs: CALL_CAP_DEFAULTS.maxLoopDelayMs,
  retryAfterS: 5,
};

export interface CallRates {
  perTrunk: CallRate;
  /** All trunks together; perSec 0 is no limit. */
  process: CallRate;
}

/** The configuration's defaults (src/config.ts explains the choice). */
export const DEFAULT_CALL_RATE: CallRates = {
  perTrunk: { perSec: CALL_CAP_DEFAULTS.maxCallRatePerTrunk, burst: defaultBurst(CALL_CAP_DEFAULTS.maxCallRatePerTrunk) },
  process: { perSec: CALL_CAP_DEFAULTS.maxCallRate, burst: defaultBurst(CALL_CAP_DEFAULTS.maxCallRate) },
};

export class SipServer {
  /** Limits, rates and overload options from the configuration (the SWITCHBOARD_MAX_* variables). */
  static optionsFrom(config: Pick<Config, 'calls'>): { limits: Partial<CallLimits>; overload: Partial<OverloadOptions>; callRate: CallRates } {
    const c = config.calls;
    return {
      limits: { maxPerAccount: c.maxPerAccount, maxPerTrunk: c.maxPerTrunk },
      overload: { maxLiveCalls: c.maxLiveCalls, maxLoopDelayMs: c.maxLoopDelayMs },
      callRate: { perTrunk: c.ratePerTrunk, process: c.rate },
    };
  }

  readonly ua: UserAgent;
  readonly registry: CallRegistry;
  readonly pool: PortPool;
  readonly abuse: AbuseGuard;
  readonly registrations: RegistrationManager;
  readonly dialer: OutboundDialer;
  readonly env: CallEnv;
  private readonly inFlight = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;
  readonly overload: OverloadOptions;
  private readonly loopLag: LoopDelayMonitor | undefined;
  /** INVITEs refused with 503 because of load. */
  readonly shed = { loopDelay: 0, liveCalls: 0 };
  /** INVITEs refused with 503 by a new-call rate limit. */
  readonly rateLimited = { trunk: 0, process: 0 };
  private lastShedLog = -Infinity;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** Trunk and registrar addresses: the abuse guard lets them through, TCP admission keeps room for them. */
  private readonly trustedSource: (ip: string) => boolean;
  /** SIP_TRUSTED_PROXIES: whose X-Switchboard-Source is believed (trusted-proxies.ts). */
  private readonly proxies: TrustedProxies;
  private lastRateLog = -Infinity;
  private readonly unsubscribeBans: () => void;

  private constructor(ua: UserAgent, opts: SipServerOptions) {
    const clock = opts.clock ?? systemClock;
    const logger = opts.logger.child({ part: 'sip' });
    this.clock = clock;
    this.logger = logger;
    this.ua = ua;
    this.pool =
      opts.portPool ??
      new PortPool({ host: opts.config.sip.host, minPort: opts.config.rtp.portMin, maxPort: opts.config.rtp.portMax, io: opts.rtpIo ?? rtpIoFor(opts.config.rtp.thread) });
    this.registrations = new RegistrationManager({ ua, trunks: opts.trunks, clock, logger, ...opts.registration });
    this.proxies = new TrustedProxies(opts.config.sip.trustedProxies ?? '');
    // A trusted proxy carries everyone's traffic: it never collects strikes or per-source TCP caps.
    this.trustedSource = (ip) => opts.trunks.findInboundBySource(ip).length > 0 || this.registrations.isRegistrar(ip) || this.proxies.trusts(ip);
    const metrics = createSipMetrics(opts.metricsRegistry);
    this.registry = new CallRegistry(createCallMetrics(opts.metricsRegistry), opts.cluster, opts.liveFeed);
    const cluster = this.registry.cluster;
    this.countTraffic(metrics);
    this.abuse = new AbuseGuard({
      clock,
      ...opts.abuse,
      trusted: this.trustedSource,
      onBan: (ip, why) => {
        metrics.ban();
        logger.warn({ ip, why }, 'SIP source banned');
        if (cluster.shared) this.own(this.shareBan(ip, why));
      },
    });
    this.unsubscribeBans = cluster.bus.subscribe((m) => this.onClusterMessage(m));
    // Before the transport reads or answers anything: banned sources hear nothing, garbage counts.
    ua.useSourceGate({
      admits: (ip) => !this.abuse.isBanned(ip),
      malformed: (ip) => {
        metrics.malformed();
        return this.abuse.malformed(ip) === 'pass';
      },
    });
    const publicHost = opts.config.sip.publicHost;
    const publicHost6 = opts.config.sip.publicHost6;
    // What SDP names to IPv4 peers: RTP_PUBLIC_HOST when set (media apart from signalling).
    const mediaHost = opts.config.rtp.publicHost ?? publicHost;
    this.env = {
      repos: opts.repos,
      trunks: opts.trunks,
      clock,
      logger,
      registry: this.registry,
      recorder: new CallRecorder(opts.repos.calls, opts.recordClock ?? clock, opts.config.nodeId ?? null),
      createMedia: (media) =>
        new RtpSession({
          pool: this.pool,
          publicAddress: publicHost6 !== undefined && media?.peer !== undefined && isIPv6(media.peer) ? publicHost6 : mediaHost,
          clock,
          logger,
          inbandDtmf: true,
          ...(opts.rtpTimeoutMs !== undefined ? { rtpTimeoutMs: opts.rtpTimeoutMs } : {}),
          ...(media?.learnSource ? { learnSource: true } : {}),
        }),
      publicHost: mediaHost,
      limits: { ...DEFAULT_LIMITS, ...opts.limits },
      ...(opts.engine ? { engine: opts.engine } : {}),
      ...(opts.answerDelayMs ? { answerDelayMs: opts.answerDelayMs } : {}),
    };
    this.dialer = new OutboundDialer(this.env, ua);
    const rates = { ...DEFAULT_CALL_RATE, ...opts.callRate };
    const limiter = new CallRateLimiter({ perTrunk: rates.perTrunk, process: rates.process }, clock.monotonic());
    // With a shared cluster the trunk buckets live in Redis; this one holds the process rate alone.
    const processLimiter = new CallRateLimiter({ perTrunk: { perSec: 0, burst: 1 }, process: rates.process }, clock.monotonic());
    const gate: InboundGate = {
      origin: (req, source) => this.proxies.origin(req, source),
      trusting: (ip) => new Set([...opts.trunks.findInboundBySource(ip).map((t) => t.inboundTrunkId), ...this.registrations.trusting(ip)]),
      auth: new TrunkAuthenticator(clock, publicHost),
      strike: (ip) => this.abuse.strike(ip),
      callRate: async (trunk) => {
        const verdict = await this.admitCallRate(limiter, processLimiter, rates, trunk.inboundTrunkId);
        if (verdict.ok) return undefined;
        this.rateLimited[verdict.limit]++;
        const trunkLabel = String(trunk.spec.id ?? trunk.inboundTrunkId);
        metrics.rateLimited(verdict.limit, trunkLabel);
        const now = clock.monotonic();
        if (now - this.lastRateLog >= 10_000) {
          this.lastRateLog = now;
          logger.warn({ limit: verdict.limit, sipTrunkId: trunkLabel, rateLimited: this.rateLimited }, 'new-call rate limit: INVITEs refused with 503');
        }
        return retryAfterSeconds(verdict.retryAfterMs);
      },
    };
    this.overload = { ...DEFAULT_OVERLOAD, ...opts.overload };
    this.loopLag = this.overload.maxLoopDelayMs > 0 ? (this.overload.loopMonitor ?? new LoopLag()) : undefined;
    ua.onInvite = (incoming) => {
      const why = this.overloaded();
      if (why) {
        this.shed[why]++;
        incoming.reject(503, 'Service Unavailable', [{ name: 'retry-after', value: String(this.overload.retryAfterS) }]);
        const now = clock.monotonic();
        if (now - this.lastShedLog >= 10_000) {
          this.lastShedLog = now;
          logger.warn({ why, shed: this.shed, liveCalls: this.registry.size, loopDelayP99Ms: this.loopLag?.p99Ms }, 'overloaded: new calls refused with 503');
        }
        return;
      }
      const work = handleInboundInvite(this.env, gate, incoming).catch((err: unknown) => {
        logger.error({ err: (err as Error).message }, 'inbound INVITE failed');
        if (incoming.state === 'pending') incoming.reject(500);
      });
      this.own(work);
    };
    this.guardTransactions();
  }

  static async start(opts: SipServerOptions): Promise<SipServer> {
    const logger = opts.logger.child({ part: 'sip' });
    const tlsConfig = opts.config.sip.tls;
    const tls = tlsConfig ? new SipTls(tlsConfig) : undefined;
    // Trust is known once the server exists (trunks, registrars); no connection arrives before.
    let server: SipServer | undefined;
    const tcp = SipServer.tcpBounds(opts, (ip) => server?.trustedSource(ip) ?? false);
    const clock = opts.clock ?? systemClock;
    let lastRefusalLog = -Infinity;
    const onRefused = (reason: string, address: string): void => {
      const now = clock.monotonic();
      if (now - lastRefusalLog < 10_000) return;
      lastRefusalLog = now;
      logger.warn({ reason, address, refused: server?.tcpStats.refused, limits: tcp.summary }, 'SIP over TCP: connections refused (logged at most every 10 s)');
    };
    const ua = await UserAgent.create({
      host: opts.config.sip.host,
      port: opts.config.sip.port,
      transports: ['udp', 'tcp'],
      userName: 'switchboard',
      userAgent: 'Switchboard',
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.timers ? { timers: opts.timers } : {}),
      ...(opts.dns ? { dns: opts.dns } : {}),
      ...(tls ? { tls } : {}),
      ...(opts.config.sip.outboundProxy ? { outboundProxy: opts.config.sip.outboundProxy } : {}),
      onError: (err) => logger.debug({ err: err.message }, 'SIP transport'),
      transport: { ...tcp.transport, onRefused },
    });
    // Bind to SIP_HOST (often 0.0.0.0) but advertise SIP_PUBLIC_HOST in Via and Contact.
    ua.config.host = opts.config.sip.publicHost;
    ua.config.host6 = opts.config.sip.publicHost6;
    ua.config.mediaHost = opts.config.rtp.publicHost;
    server = new SipServer(ua, opts);
    await server.adoptSharedBans();
    server.tcpLimits = tcp.summary;
    server.tls = tls;
    server.registrations.start();
    logger.info(
      {
        host: opts.config.sip.host,
        port: ua.port,
        ...(ua.tlsPort > 0 ? { tlsPort: ua.tlsPort } : {}),
        publicHost: opts.config.sip.publicHost,
        ...(opts.config.sip.publicHost6 !== undefined ? { publicHost6: opts.config.sip.publicHost6 } : {}),
        ...(opts.config.rtp.publicHost !== undefined ? { rtpPublicHost: opts.config.rtp.publicHost } : {}),
        tcp: tcp.summary,
      },
      'SIP listening',
    );
    return server;
  }

  private tls: SipTls | undefined;

  /** The TLS listener's port (0: none). */
  get tlsPort(): number {
    return this.ua.tlsPort;
  }

  /**
   * Reads the TLS certificate, key and CA files again (SIGHUP); new connections use them, open
   * ones keep theirs. Throws, keeping the current ones, when the files are unusable.
   */
  reloadTls(): void {
    this.tls?.reload();
  }

  /**
   * Admission and deadlines of inbound SIP over TCP: the configured caps, else the defaults
   * derived from this process's descriptor limit (src/sip/fd-budget.ts).
   */
  private static tcpBounds(opts: SipServerOptions, trusted: (ip: string) => boolean) {
    const c: SipTcpConfig = opts.config.sip.tcp ?? { ...SIP_TCP_DEFAULTS };
    const limit = readSoftFdLimit() ?? FD_BUDGET_RULE.fallbackLimit;
    const maxLiveCalls = opts.overload?.maxLiveCalls ?? DEFAULT_OVERLOAD.maxLiveCalls;
    const plan = planFds(limit, maxLiveCalls, opts.config.rtp.portMin, opts.config.rtp.portMax);
    const fds: FdBudget = { limit, keepFree: c.fdReserve ?? plan.reserve, open: countOpenFds };
    const maxConnections = c.maxConnections ?? plan.maxConnections;
    const admission = new TcpAdmission({ maxConnections, maxPerSource: c.maxPerSource, acceptRatePerSecond: c.acceptRatePerSecond, trusted, fds });
    return {
      transport: { admission, idleTimeoutMs: c.idleTimeoutMs, messageTimeoutMs: c.messageTimeoutMs },
      summary: { maxConnections, maxPerSource: c.maxPerSource, acceptRatePerSecond: c.acceptRatePerSecond, fdLimit: limit, fdReserve: fds.keepFree },
    };
  }

  get port(): number {
    return this.ua.port;
  }

  /** The bounds on inbound SIP over TCP in force (configured or derived from the descriptor limit). */
  tcpLimits!: Readonly<{ maxConnections: number; maxPerSource: number; acceptRatePerSecond: number; fdLimit: number; fdReserve: number }>;

  /** SIP stream connections open, refused and closed at a deadline (for /metrics). */
  get tcpStats(): UserAgent['streams'] {
    return this.ua.streams;
  }

  /**
   * SIP on the wire: requests received that got past the abuse guard (wrapped in
   * guardTransactions), responses sent, retransmissions included in both.
   */
  private countTraffic(metrics: SipMetrics): void {
    this.ua.layer.onSent = (message) => {
      if ('status' in message) metrics.responseSent(message.status);
    };
    this.countRequest = (method) => metrics.requestReceived(method);
  }

  private countRequest: (method: string) => void = () => undefined;

  /**
   * The abuse guard runs before the transaction layer: a dropped request never creates a
   * transaction, timer or response. Responses from banned sources are dropped the same way.
   */
  private guardTransactions(): void {
    const layer = this.ua.layer;
    const receiveRequest = layer.receiveRequest.bind(layer);
    const receiveResponse = layer.receiveResponse.bind(layer);
    layer.receiveRequest = (req, source) => {
      // Only a trusted proxy may say where a request came from; anyone else's assertion is removed.
      this.proxies.scrub(req, source);
      if (this.abuse.check(req, this.proxies.origin(req, source).address) !== 'pass') return;
      this.countRequest(req.method);
      receiveRequest(req, source);
    };
    layer.receiveResponse = (res, source) => {
      if (!this.abuse.isBanned(source.address)) receiveResponse(res, source);
    };
  }

  /**
   * One new call against the new-call rates. A trunk's rate is the carrier's contract, so with a
   * shared cluster it is the service's bucket (it holds whichever node the INVITEs reach); the
   * process rate is what this box can take and stays this node's own, checked first (a process
   * token spent on a call the trunk then refuses is the price of not asking Redis on a saturated
   * node). Redis not answering: this node's trunk buckets decide meanwhile.
   */
  private async admitCallRate(local: CallRateLimiter, processOnly: CallRateLimiter, rates: CallRates, trunkKey: string): Promise<RateVerdict> {
    const shared = this.registry.cluster.buckets;
    if (!shared || rates.perTrunk.perSec <= 0) return local.admit(trunkKey, this.clock.monotonic());
    const box = processOnly.admit(trunkKey, this.clock.monotonic());
    if (!box.ok) return box;
    try {
      const refused = await shared.take([{ name: `trunk:${trunkKey}`, rate: rates.perTrunk }], this.clock.now());
      return refused ? { ok: false, limit: 'trunk', retryAfterMs: refused.waitMs } : { ok: true };
    } catch {
      return local.admit(trunkKey, this.clock.monotonic());
    }
  }

  /** A ban this node decided, for every node: recorded (for nodes starting later) and broadcast. */
  private async shareBan(ip: string, why: string): Promise<void> {
    const { cluster } = this.registry;
    const banMs = this.abuse.banMs;
    try {
      await cluster.bans.put(ip, banMs);
      await cluster.bus.publish('all', { type: 'ban', ip, banMs, why });
    } catch (err) {
      // Redis away: the ban holds on this node; the others decide for themselves meanwhile.
      this.logger.warn({ ip, err: (err as Error).message }, 'SIP ban not shared (Redis did not answer)');
    }
  }

  /** Bans another node decided. */
  private onClusterMessage(m: Envelope): void {
    if (m.type !== 'ban' || m.from === this.registry.cluster.nodeId) return;
    if (typeof m.ip !== 'string' || m.ip.length > 64 || !(m.banMs > 0)) return;
    this.abuse.adopt(m.ip, m.banMs);
    this.logger.info({ ip: m.ip, why: m.why, node: m.from }, 'SIP source banned by another node');
  }

  /** The bans in force when this node starts (other nodes decided them before it was here). */
  private async adoptSharedBans(): Promise<void> {
    const { cluster } = this.registry;
    if (!cluster.shared) return;
    const bans = await cluster.bans.list(10_000).catch(() => []);
    for (const b of bans) this.abuse.adopt(b.ip, b.leftMs);
    if (bans.length > 0) this.logger.info({ bans: bans.length }, 'SIP bans of the service adopted');
  }

  /** Why a new call must be refused right now, if it must. */
  private overloaded(): keyof SipServer['shed'] | undefined {
    if (this.registry.size >= this.overload.maxLiveCalls) return 'liveCalls';
    if (this.loopLag && this.loopLag.p99Ms > this.overload.maxLoopDelayMs) return 'loopDelay';
    return undefined;
  }

  /** Keeps a handle on background work so close() can wait for it. */
  private own(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /**
   * The node drains from now on: new INVITEs get 503 with Retry-After and out-of-dialog OPTIONS
   * 503 too (a dispatcher's probe then takes the node out of rotation); live calls go on.
   */
  startDraining(): void {
    this.registry.startDraining();
    this.ua.unavailable = { retryAfterS: DRAIN_RETRY_AFTER_S };
  }

  get isDraining(): boolean {
    return this.registry.isDraining;
  }

  /** Refuses new calls, gives live ones `graceMs` to end, then hangs up the rest. */
  async drain(graceMs = 0): Promise<void> {
    this.startDraining();
    await this.registry.drain(graceMs);
  }

  /**
   * Stops on `plan` (a number: that grace with the default hang-up and close budgets; see
   * src/util/drain-plan.ts): refuses new calls, gives live ones the grace, hangs up the rest,
   * waits for their BYE answers and the calls' own finishing work (post-call) only until the
   * plan's hang-up deadline, unregisters (bounded), then closes the UA, which ends every
   * transaction still waiting (a BYE nobody answers would otherwise retransmit for 32 s).
   */
  close(plan: number | DrainPlan = 0): Promise<void> {
    this.closing ??= (async () => {
      this.startDraining();
      const drain = typeof plan === 'number' ? new DrainPlan(this.clock.now(), { graceMs: plan }) : plan;
      const { byes } = await this.registry.drain(Math.max(0, drain.graceEndsAtMs - this.clock.now()));
      const hangupEnd = drain.hangupEndsAtMs(this.clock.now());
      const settled = await settleBy(this.clock, hangupEnd, Promise.all([byes, this.dialer.close(), Promise.allSettled([...this.inFlight])]));
      if (!settled) this.logger.warn({ waitedMs: drain.budget.hangupMs }, 'drain: BYE answers or call finishing cut short; post-call work left is done on the next start');
      // Sessions that finished setting up while we waited.
      await this.registry.drain(0);
      const closeEnd = drain.closeEndsAtMs(this.clock.now());
      await this.registrations.close(Math.max(0, Math.min(1000, closeEnd - this.clock.now())));
      await this.ua.close();
      this.loopLag?.close();
      this.unsubscribeBans();
      this.registry.close();
    })();
    return this.closing;
  }
}
