import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './config.ts';
import { openStore } from './store/db.ts';
import { createRepos } from './store/index.ts';
import { SecretBox } from './store/secrets.ts';
import { systemClock } from './util/clock.ts';
import { createLogger } from './util/logger.ts';
import { buildApp } from './api/app.ts';
import type { AppContext } from './context.ts';

export interface Engine {
  ctx: AppContext;
  httpUrl: string;
  close(): Promise<void>;
}

/** The composition root: config → store → repos → API (→ SIP/media as they land). */
export async function startEngine(config: Readonly<Config> = loadConfig()): Promise<Engine> {
  const logger = createLogger(config.logLevel);
  const store = openStore(config.dataDir);
  const clock = systemClock;
  const ctx: AppContext = {
    config,
    store,
    repos: createRepos(store, clock),
    clock,
    logger,
    secrets: SecretBox.forDataDir(config.dataDir),
  };
  const { app } = await buildApp(ctx);
  await app.listen({ host: config.http.host, port: config.http.port });
  const addr = app.server.address() as AddressInfo;
  const httpUrl = `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${addr.port}`;
  logger.info({ httpUrl }, 'switchboard started');

  let closing: Promise<void> | undefined;
  return {
    ctx,
    httpUrl,
    close() {
      closing ??= (async () => {
        await app.close();
        await store.close();
      })();
      return closing;
    },
  };
}
