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
import { applyHeapGrowing } from './util/gc-tuning.ts';
import { useNativeDsp } from './audio/native-dsp.ts';
import { systemClock } from './util/clock.ts';
import { createLogger } from './util/logger.ts';
import { buildApp } from './api/app.ts';
import { SipServer } from './sip/server.ts';
import { rtpIoFor, sharedRtpIoThread } from './media/rtp-io/index.ts';
import type { AppContext } from './context.ts';
import { chatServices } from './chat/services.ts';
import { wireCampaigns } from './campaigns/wiring.ts';
import { createMetrics, registerSipTcpMetrics } from './api/metrics.ts';
import { registerRtpFilterMetric } from './media/media-metrics.ts';
import { registerWebhookMetrics } from './webhooks/webhook-metrics.ts';
import { sealSecretsAtRest } from './store/seal-at-rest.ts';
import { createProviderMetrics } from './telemetry/provider-metrics.ts';
import { EventPublisher } from './webhooks/events.ts';
import { wireCalls, type CallWiring } from './call/wiring/index.ts';
import { CallHeartbeat } from './call/call-heartbeat.ts';
import { DrainPlan, settleBy } from './util/drain-plan.ts';
import { startTracing } from './telemetry/tracing.ts';

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
  const logger = createLogger(config.logLevel, opts.logDestination);
  applyHeapGrowing(config.heapGrowingPercent);
  // The C DSP kernels (the denoiser's core) when built, unless SWITCHBOARD_DSP_NATIVE=0.
  useNativeDsp(config.dspNative);
  // Before the store opens: a bad SWITCHBOARD_CATALOG stops start-up with nothing to clean up.
  const catalog = Catalog.load(config);
  // One line per kind of provider: which are usable, which miss a key (named, never shown).
  logProviderStatus(logger, config, catalog);
  const { store, secrets } = await openConfiguredStore(config);
  const clock = systemClock;
  const ctx: AppContext = {
    config,
    store,
    repos: createRepos(store, clock, secrets),
    clock,
    logger,
    secrets,
    catalog,
    trunks: new InMemoryTrunkRegistry(),
  };
  // Custom tool headers and webhook signing secrets stored in clear by an older build are sealed
  // now (they read either way), and the plaintext is pushed out of the database and -wal files.
  await sealSecretsAtRest(store, ctx.repos, logger);
  // Trunks live in the registry only while the engine runs: provision the stored ones again.
  const restored = await restoreTrunks(ctx.repos.sipTrunks, ctx.trunks, logger);
  if (restored > 0) logger.info({ restored }, 'SIP trunks re-provisioned');
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
    await store.close();
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
      ...SipServer.optionsFrom(config),
    });
  } catch (err) {
    await calls.close();
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
  registerSipTcpMetrics(metrics.registry, () => sip.tcpStats);
  registerRtpFilterMetric(metrics.registry, () => sip.registry.rtpPacketsFiltered);
  registerWebhookMetrics(metrics.registry, { pending: () => ctx.repos.outbox.pendingCount(), outcomes: () => chat.delivery.outcomes }, () => ctx.clock.now());
  // Calls run under call control (voice tools, voicemail detection) once SIP is up.
  calls.attachSip(sip);
  ctx.dialer = sip.dialer;
  // Campaigns dial through the same outbound dialer; update-status starts and stops them.
  const campaigns = wireCampaigns({ store, repos: ctx.repos, trunks: ctx.trunks, placer: sip.dialer, registry: sip.registry, clock, logger });
  ctx.campaignRunner = campaigns.dialer;
  const { app } = await buildApp(ctx, { metrics });
  try {
    await app.listen({ host: config.http.host, port: config.http.port });
  } catch (err) {
    // A busy HTTP port must not leave SIP sockets (and the process) running.
    await sip.close(0);
    await rtpIo.close();
    await app.close();
    await calls.close();
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
  const addr = app.server.address() as AddressInfo;
  const httpUrl = `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${addr.port}`;
  logger.info({ httpUrl }, 'switchboard started');
  // Webhook outbox delivery and chat inactivity sweeps; both resume from the store after a restart.
  chat.start();
  // Live calls' records are stamped alive, so a crash-cut call is closed by its real length.
  const heartbeat = new CallHeartbeat({ registry: sip.registry, calls: ctx.repos.calls, clock, logger, periodMs: config.callHeartbeatMs });
  heartbeat.start();
  // Calls a previous run left open or unfinished: closed and finished before new ones matter.
  await calls.start();
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
        // Every call has ended: the RTP I/O thread has nothing left to carry.
        await upTo(closeEnd, 'rtp-io', rtpIo.close());
        await upTo(closeEnd, 'http', app.close());
        await upTo(closeEnd, 'heartbeat', heartbeat.stop());
        await upTo(closeEnd, 'calls', calls.close());
        await upTo(closeEnd, 'chat', chat.stop());
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
