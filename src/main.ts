import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { loadConfig, type Config } from './config.ts';
import { preferNativeSrtp } from './media/srtp/srtp-media.ts';
import { openConfiguredStore } from './store/open-store.ts';
import { createRepos } from './store/index.ts';
import { SecretBox } from './store/secrets.ts';
import { Catalog } from './catalog/catalog.ts';
import { logProviderStatus } from './providers/status.ts';
import { InMemoryTrunkRegistry, restoreTrunks } from './sip/trunk-registry.ts';
import { TrunkSync } from './cluster/trunk-sync.ts';
import { relayLiveFeed } from './call/live/cluster-relay.ts';
import { applyHeapGrowing } from './util/gc-tuning.ts';
import { useNativeDsp } from './audio/native-dsp.ts';
import { systemClock } from './util/clock.ts';
import { createLogger } from './util/logger.ts';
import { buildApp } from './api/app.ts';
import { SipServer } from './sip/server.ts';
import { rtpIoFor, sharedRtpIoThread } from './media/rtp-io/index.ts';
import { liveFeedOf, type AppContext } from './context.ts';
import { chatServices } from './chat/services.ts';
import { wireCampaigns } from './campaigns/wiring.ts';
import { createMetrics, registerSipTcpMetrics } from './api/metrics.ts';
import { registerRtpFilterMetric } from './media/media-metrics.ts';
import { registerWebhookMetrics } from './webhooks/webhook-metrics.ts';
import { sealSecretsAtRest } from './store/seal-at-rest.ts';
import { createProviderMetrics } from './telemetry/provider-metrics.ts';
import { EventPublisher } from './webhooks/events.ts';
import { wireCalls, type CallWiring } from './call/wiring/index.ts';
import { SignallingServer } from './webrtc/signalling-socket.ts';
import { WebCalls } from './webrtc/web-calls.ts';
import { CallHeartbeat } from './call/call-heartbeat.ts';
import { DrainPlan, settleBy } from './util/drain-plan.ts';
import { startTracing } from './telemetry/tracing.ts';
import { createRecordingStorage } from './blobs/index.ts';
import { nodeLeases } from './cluster/node-leases.ts';
import { openCluster } from './cluster/index.ts';
import { clusterCampaignRunner } from './cluster/campaign-stop.ts';

export interface Engine {
  ctx: AppContext;
  httpUrl: string;
  sip: SipServer;
  /** The AI side of calls: the engine context, post-call deps and sweeper (tests and benches look in). */
  calls: CallWiring;
  /**
   * Drains live calls (hung up after `graceMs`, default SWITCHBOARD_DRAIN_SECONDS), then stops
   * SIP, HTTP and the store, all within the bound of a DrainPlan (src/util/drain-plan.ts): the
   * grace plus a few seconds, whatever peers and providers do.
   */
  close(graceMs?: number): Promise<void>;
  /** When close(graceMs) is over at the latest, from its start (what a watchdog may wait for). */
  drainBoundMs(graceMs?: number): number;
}

/** The composition root: config → store → repos → trunks → SIP/media → API. */
export interface EngineOptions {
  /** Where the JSON log lines go (default: stdout). */
  logDestination?: DestinationStream;
}

export async function startEngine(config: Readonly<Config> = loadConfig(), opts: EngineOptions = {}): Promise<Engine> {
  const logger = createLogger(config.logLevel, opts.logDestination, config.nodeId);
  applyHeapGrowing(config.heapGrowingPercent);
  // The C DSP kernels (the denoiser's core) when built, unless SWITCHBOARD_DSP_NATIVE=0.
  useNativeDsp(config.dspNative);
  // Before the store opens: a bad SWITCHBOARD_CATALOG stops start-up with nothing to clean up.
  const catalog = Catalog.load(config);
  // One line per kind of provider: which are usable, which miss a key (named, never shown).
  logProviderStatus(logger, config, catalog);
  const clock = systemClock;
  // Before the store opens: with SWITCHBOARD_REDIS_URL set and Redis unreachable, start-up stops here.
  const cluster = await openCluster(config, logger, clock);
  let opened: Awaited<ReturnType<typeof openConfiguredStore>>;
  try {
    opened = await openConfiguredStore(config);
  } catch (err) {
    await cluster.close();
    throw err;
  }
  const { store, secrets } = opened;
  const ctx: AppContext = {
    config,
    store,
    repos: createRepos(store, clock, secrets, { nodeId: config.cluster.nodeId }),
    clock,
    logger,
    secrets,
    catalog,
    trunks: new InMemoryTrunkRegistry(),
    // Recordings and tapes: under the data dir, archived to the bucket when SWITCHBOARD_S3_BUCKET is set.
    recordings: await createRecordingStorage(config, clock, logger),
    cluster,
  };
  // Custom tool headers and webhook signing secrets stored in clear by an older build are sealed
  // now (they read either way), and the plaintext is pushed out of the database and -wal files.
  await sealSecretsAtRest(store, ctx.repos, logger);
  // Trunks live in the registry only while the engine runs: provision the stored ones again.
  const restored = await restoreTrunks(ctx.repos.sipTrunks, ctx.trunks, logger);
  if (restored > 0) logger.info({ restored }, 'SIP trunks re-provisioned');
  // On a store shared with other nodes, trunks created or deleted through them arrive here too.
  const trunkSync = config.databaseUrl !== undefined ? new TrunkSync(ctx.repos.sipTrunks, ctx.trunks, logger) : undefined;
  trunkSync?.start();
  // With Redis, the live call feed shows every node's calls, whichever node a watcher reaches.
  const stopLiveRelay = relayLiveFeed(liveFeedOf(ctx), cluster);
  // Work done once across the nodes sharing the store (docs/WORK-ONCE.md): the sweeps and the
  // trunk registrations run on the node holding their lease, and move when it stops or dies.
  let sipUp: SipServer | undefined;
  const leases = nodeLeases({
    leases: ctx.repos.leases,
    nodeId: config.cluster.nodeId,
    ttlMs: config.cluster.leaseTtlMs,
    clock,
    logger: logger.child({ part: 'leases' }),
    onRegistrarChange: () => sipUp?.registrations.sync(),
  });
  await leases.start();
  ctx.sweepLease = leases.sweeper;
  // One /metrics registry for the API, the call engine's per-turn latency histograms and the SIP edge's counters.
  const metrics = createMetrics();
  // Before the chat services and call wiring build their providers: they are measured from the start.
  ctx.providerMetrics = createProviderMetrics(metrics.registry);
  // OpenTelemetry traces when an OTLP endpoint is set; nothing of the SDK is loaded otherwise.
  // Before any provider is built: with tracing on, they are built with their span decorators.
  const tracing = await startTracing(config.tracing);
  if (tracing) logger.info({ tracesUrl: new URL(config.tracing!.tracesUrl!).origin }, 'exporting traces over OTLP/HTTP');
  // Built here (not only on first request) because calls share its agent and webhook delivery.
  const chat = chatServices(ctx);
  let calls: CallWiring;
  let sip: SipServer;
  // RTP sockets: in the process's I/O thread (the default) or on this thread (SWITCHBOARD_RTP_THREAD=0);
  // the thread's through the native module when built (SWITCHBOARD_RTP_NATIVE=0: dgram).
  if (config.rtp.thread) {
    sharedRtpIoThread().useLogger(logger.child({ part: 'rtp-io' }));
    sharedRtpIoThread().preferNative(config.rtp.native);
  }
  preferNativeSrtp(config.rtp.native);
  const rtpIo = rtpIoFor(config.rtp.thread);
  try {
    calls = await wireCalls({
      ctx,
      llm: chat.llm,
      agent: chat.agent,
      events: new EventPublisher(ctx.repos.outbox, clock, () => chat.delivery.kick()),
      metricsRegistry: metrics.registry,
    });
  } catch (err) {
    await leases.stop();
    await store.close();
    await cluster.close();
    await tracing?.shutdown();
    throw err;
  }
  try {
    sip = await SipServer.start({
      config,
      repos: ctx.repos,
      trunks: ctx.trunks,
      logger,
      clock,
      engine: calls.engine,
      rtpIo,
      metricsRegistry: metrics.registry,
      liveFeed: liveFeedOf(ctx),
      cluster,
      ...SipServer.optionsFrom(config),
      registration: { leader: leases.registrar },
    });
  } catch (err) {
    await leases.stop();
    await calls.close();
    await store.close();
    await cluster.close();
    await tracing?.shutdown();
    throw err;
  }
  sipUp = sip;
  registerSipTcpMetrics(metrics.registry, () => sip.tcpStats);
  registerRtpFilterMetric(metrics.registry, () => sip.registry.rtpPacketsFiltered);
  registerWebhookMetrics(metrics.registry, { pending: () => ctx.repos.outbox.pendingCount(), outcomes: () => chat.delivery.outcomes }, () => ctx.clock.now());
  // Calls run under call control (voice tools, voicemail detection) once SIP is up.
  calls.attachSip(sip);
  // /readyz answers 503 from the moment the node drains.
  ctx.readiness = () => ({ draining: sip.isDraining });
  ctx.dialer = sip.dialer;
  ctx.liveCalls = sip.registry;
  // Campaigns dial through the same outbound dialer; update-status starts and stops them.
  const campaigns = wireCampaigns({
    store,
    repos: ctx.repos,
    trunks: ctx.trunks,
    placer: sip.dialer,
    registry: sip.registry,
    clock,
    logger,
    cluster: config.cluster,
    // A campaign another node started, or a lead whose node died, is noticed within a third of a lease.
    watchMs: Math.min(5_000, Math.max(200, Math.floor(config.cluster.leaseTtlMs / 3))),
  });
  // A stop through any node's API reaches the node dialling the campaign.
  const campaignRunner = clusterCampaignRunner(campaigns.dialer, cluster, logger);
  ctx.campaignRunner = campaignRunner;
  const { app, console: webConsole } = await buildApp(ctx, { metrics });
  // Browser calls: the signalling socket on the API's HTTP server, calls on the SIP server's CallEnv.
  const signalling = new SignallingServer({
    calls: new WebCalls({ env: sip.env, iceServers: config.webrtc.iceServers, portRange: config.webrtc.portRange, host: config.sip.host }),
    accountForKey: (key) => ctx.repos.accounts.accountForKey(key),
    clock,
    logger,
    allowedOrigins: config.webrtc.allowedOrigins,
  });
  signalling.attach(app.server);
  try {
    await app.listen({ host: config.http.host, port: config.http.port });
  } catch (err) {
    // A busy HTTP port must not leave SIP sockets (and the process) running.
    await sip.close(0);
    await leases.stop();
    await rtpIo.close();
    await app.close();
    await calls.close();
    await store.close();
    campaignRunner.detach();
    await cluster.close();
    await tracing?.shutdown();
    throw err;
  }
  const addr = app.server.address() as AddressInfo;
  const httpUrl = `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${addr.port}`;
  logger.info({ httpUrl, console: `${httpUrl}/console` }, 'switchboard started');
  // The console is built in memory once; started now so its first page is served at once.
  webConsole.warm().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'the web console could not be built'));
  // Webhook outbox delivery and chat inactivity sweeps; both resume from the store after a restart.
  chat.start();
  // Live calls' records are stamped alive, so a crash-cut call is closed by its real length.
  const heartbeat = new CallHeartbeat({ registry: sip.registry, calls: ctx.repos.calls, clock, logger, periodMs: config.callHeartbeatMs });
  heartbeat.start();
  // Calls a previous run left open or unfinished: closed and finished before new ones matter.
  await calls.start();
  // Recordings a previous run could not archive (bucket down, crash) go up now; never fatal.
  if (ctx.recordings?.archiving) {
    logger.info({ bucket: ctx.recordings.remote!.label }, 'recordings and call tapes are archived to object storage');
    await ctx.recordings.recover().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'could not list recordings left local'));
  }
  // After a restart: campaigns left in progress carry on, without calling a lead twice.
  await campaigns.start().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'campaigns could not be resumed'));

  let closing: Promise<void> | undefined;
  return {
    ctx,
    httpUrl,
    sip,
    calls,
    drainBoundMs(graceMs = config.drainGraceMs) {
      const plan = new DrainPlan(0, { graceMs });
      return plan.latestEndMs;
    },
    close(graceMs = config.drainGraceMs) {
      closing ??= (async () => {
        const plan = new DrainPlan(clock.now(), { graceMs });
        // At once, before any step: new INVITEs and the proxy's OPTIONS probes get 503, /readyz 503.
        sip.startDraining();
        // Each step is waited for until its deadline, no longer: what it leaves undone (a
        // post-call evaluation, a webhook in flight) is in the store and resumes on the next start.
        const upTo = async (deadlineMs: number, step: string, work: Promise<unknown>): Promise<void> => {
          if (!(await settleBy(clock, deadlineMs, work))) logger.warn({ step }, 'drain: step cut at its deadline');
        };
        // Calls first: they may still write their records to the store.
        // No new campaign call while draining; in-progress campaigns resume on the next start.
        await upTo(plan.hangupEndsAtMs(clock.now()), 'campaigns', campaigns.close());
        await sip.close(plan);
        const closeEnd = plan.closeEndsAtMs(clock.now());
        // Browser calls were drained with the SIP server's registry; their sockets go now.
        await upTo(closeEnd, 'webrtc', signalling.close());
        // Every call has ended: the RTP I/O thread has nothing left to carry.
        await upTo(closeEnd, 'rtp-io', rtpIo.close());
        await upTo(closeEnd, 'http', app.close());
        await upTo(closeEnd, 'heartbeat', heartbeat.stop());
        await upTo(closeEnd, 'calls', calls.close());
        await upTo(closeEnd, 'chat', chat.stop());
        // Uploads in flight finish or are cut; what is owed stays local and the next start uploads it.
        await upTo(closeEnd, 'recordings', ctx.recordings?.close() ?? Promise.resolve());
        campaignRunner.detach();
        // Leaves the service: this node's call slots free at once, not after the lease.
        stopLiveRelay();
        await upTo(closeEnd, 'cluster', cluster.close());
        // Given up last: the other nodes take the sweeps and registrations over at once.
        await upTo(closeEnd, 'trunk sync', trunkSync?.stop() ?? Promise.resolve());
        await upTo(closeEnd, 'leases', leases.stop());
        await store.close();
        // Last: the spans of everything above are exported (bounded by the export timeout).
        if (tracing) await upTo(clock.now() + (config.tracing?.exportTimeoutMs ?? 10_000), 'tracing', tracing.shutdown());
        logger.info({ drainedMs: Math.round(clock.now() - plan.startMs) }, 'switchboard stopped');
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
      })();
      return closing;
    },
  };
}
