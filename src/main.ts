import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './config.ts';
import { openStore } from './store/db.ts';
import { createRepos } from './store/index.ts';
import { SecretBox } from './store/secrets.ts';
import { Catalog } from './catalog/catalog.ts';
import { InMemoryTrunkRegistry, restoreTrunks } from './sip/trunk-registry.ts';
import { systemClock } from './util/clock.ts';
import { createLogger } from './util/logger.ts';
import { buildApp } from './api/app.ts';
import type { AppContext } from './context.ts';
import { chatServices } from './chat/services.ts';

export interface Engine {
  ctx: AppContext;
  httpUrl: string;
  close(): Promise<void>;
}

/** The composition root: config → store → repos → API (→ SIP/media as they land). */
export async function startEngine(config: Readonly<Config> = loadConfig()): Promise<Engine> {
  const logger = createLogger(config.logLevel);
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
  const { app } = await buildApp(ctx);
  await app.listen({ host: config.http.host, port: config.http.port });
  const addr = app.server.address() as AddressInfo;
  const httpUrl = `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${addr.port}`;
  logger.info({ httpUrl }, 'switchboard started');
  // Webhook outbox delivery and chat inactivity sweeps; both resume from the store after a restart.
  const chat = chatServices(ctx);
  chat.start();

  let closing: Promise<void> | undefined;
  return {
    ctx,
    httpUrl,
    close() {
      closing ??= (async () => {
        await app.close();
        await chat.stop();
        await store.close();
      })();
      return closing;
    },
  };
}
