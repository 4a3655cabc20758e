import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './config.ts';
import { preferNativeSrtp } from './media/srtp/srtp-media.ts';
import { openStore } from './store/db.ts';
import { createRepos } from './store/index.ts';
import { SecretBox } from './store/secrets.ts';
import { Catalog } from './catalog/catalog.ts';
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
import { createMetrics } from './api/metrics.ts';
import { EventPublisher } from './webhooks/events.ts';
import { wireCalls, type CallWiring } from './call/wiring/index.ts';

export interface Engine {
  ctx: AppContext;
  httpUrl: string;
  sip: SipServer;
  /** The AI side of calls: the engine context, post-call deps and sweeper (tests and benches look in). */
  calls: CallWiring;
  /** Drains live calls (hung up after `graceMs`), then stops SIP, HTTP and the store. */
  close(graceMs?: number): Promise<void>;
}

/** How long live calls may continue after SIGTERM before they are hung up. */
const DRAIN_GRACE_MS = 20_000;

/** The composition root: config → store → repos → trunks → SIP/media → API. */
export async function startEngine(config: Readonly<Config> = loadConfig()): Promise<Engine> {
  const logger = createLogger(config.logLevel);
  applyHeapGrowing(config.heapGrowingPercent);
  // The C DSP kernels (the denoiser's core) when built, unless SWITCHBOARD_DSP_NATIVE=0.
  useNativeDsp(config.dspNative);
  // Before the store opens: a bad SWITCHBOARD_CATALOG stops start-up with nothing to clean up.
  const catalog = Catalog.load(config);
  const store = openStore(config.dataDir);
  const clock = systemClock;
  const secrets = SecretBox.forDataDir(config.dataDir);
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
  // Trunks live in the registry only while the engine runs: provision the stored ones again.
  const restored = await restoreTrunks(ctx.repos.sipTrunks, ctx.trunks, logger);
  if (restored > 0) logger.info({ restored }, 'SIP trunks re-provisioned');
  // One /metrics registry for the API and the call engine's per-turn latency histograms.
  const metrics = createMetrics();
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
    throw err;
  }
  try {
    sip = await SipServer.start({ config, repos: ctx.repos, trunks: ctx.trunks, logger, clock, engine: calls.engine, rtpIo, ...SipServer.optionsFrom(config) });
  } catch (err) {
    await calls.close();
    await store.close();
    throw err;
  }
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
    throw err;
  }
  const addr = app.server.address() as AddressInfo;
  const httpUrl = `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${addr.port}`;
  logger.info({ httpUrl }, 'switchboard started');
  // Webhook outbox delivery and chat inactivity sweeps; both resume from the store after a restart.
  chat.start();
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
    close(graceMs = DRAIN_GRACE_MS) {
      closing ??= (async () => {
        // Calls first: they may still write their records to the store.
        // No new campaign call while draining; in-progress campaigns resume on the next start.
        await campaigns.close();
        await sip.close(graceMs);
        // Every call has ended: the RTP I/O thread has nothing left to carry.
        await rtpIo.close();
        await app.close();
        await calls.close();
        await chat.stop();
        await store.close();
      })();
      return closing;
    },
  };
}
