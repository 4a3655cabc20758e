import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Store, Repos } from './store/index.ts';
import type { Clock } from './util/clock.ts';
import type { SecretBox } from './store/secrets.ts';

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
}
