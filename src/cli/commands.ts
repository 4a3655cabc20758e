import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { openStore } from '../store/db.ts';
import { createRepos } from '../store/index.ts';
import { systemClock } from '../util/clock.ts';
import { parseDollars, toDollars } from '../util/money.ts';

/**
 * The `switchboard` command. Each command prints one JSON object on stdout and exits 0, or an
 * error on stderr and exits non-zero. Store commands work while the engine runs (SQLite WAL).
 */
export class UsageError extends Error {}

/** How far past the drain's own bound the `serve` watchdog lets it run before exiting anyway. */
const DRAIN_WATCHDOG_SLACK_MS = 2_000;

export const USAGE = `usage:
  switchboard accounts create --name NAME [--balance USD]
  switchboard accounts balance --account N [--set USD | --add USD]
  switchboard keys create --account N
  switchboard keys revoke --key KEY
  switchboard serve
  switchboard replay --assistant FILE.json --caller AUDIO.wav [--tape CALL.json] [--stand-ins]
  switchboard replay --assistant FILE.json --tape CALL.tape.json [--caller AUDIO.wav] [--stand-ins]`;

function accountId(text: string | undefined): number {
  if (!text || !/^\d+$/.test(text)) throw new UsageError('--account must be an account number');
  return Number(text);
}

function dollars(flag: string, text: string | undefined): number {
  try {
    return parseDollars(text ?? '');
  } catch {
    throw new UsageError(`${flag} must be an amount in dollars, e.g. 25 or 12.50`);
  }
}

async function withStore<T>(fn: (repos: ReturnType<typeof createRepos>) => Promise<T>): Promise<T> {
  const store = openStore(loadConfig().dataDir);
  try {
    return await fn(createRepos(store, systemClock));
  } finally {
    await store.close();
  }
}

export async function run(argv: string[]): Promise<unknown> {
  const [group, action, ...rest] = argv;
  const command = [group, action].filter(Boolean).join(' ');
  const { values } = parseArgs({
    args: group === 'serve' || group === 'replay' ? [action ?? '', ...rest].filter(Boolean) : rest,
    options: {
      name: { type: 'string' },
      balance: { type: 'string' },
      account: { type: 'string' },
      set: { type: 'string' },
      add: { type: 'string' },
      key: { type: 'string' },
      assistant: { type: 'string' },
      caller: { type: 'string' },
      tape: { type: 'string' },
      'stand-ins': { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });

  switch (group === 'serve' || group === 'replay' ? group : command) {
    case 'accounts create': {
      if (!values.name?.trim()) throw new UsageError('--name is required');
      const name = values.name.trim();
      const balance = values.balance === undefined ? 0 : dollars('--balance', values.balance);
      if (balance < 0) throw new UsageError('--balance may not be negative');
      return withStore(async (repos) => {
        const account = await repos.accounts.create(name);
        if (balance > 0) repos.ledger.adjust(account.id, balance, 'initial balance', 'operator:cli');
        return { account_id: account.id, api_key: await repos.accounts.createKey(account.id) };
      });
    }
    case 'accounts balance': {
      const id = accountId(values.account);
      if (values.set !== undefined && values.add !== undefined) throw new UsageError('use --set or --add, not both');
      return withStore(async (repos) => {
        if (!(await repos.accounts.get(id))) throw new Error(`account ${id} not found`);
        if (values.set !== undefined) {
          const target = dollars('--set', values.set);
          if (target < 0) throw new UsageError('--set may not be negative');
          repos.ledger.setBalance(id, target, 'balance set by operator', 'operator:cli');
        }
        if (values.add !== undefined) repos.ledger.adjust(id, dollars('--add', values.add), 'top-up by operator', 'operator:cli');
        return { account_id: id, balance: toDollars(repos.ledger.balance(id)) };
      });
    }
    case 'keys create': {
      const id = accountId(values.account);
      return withStore(async (repos) => {
        if (!(await repos.accounts.get(id))) throw new Error(`account ${id} not found`);
        return { api_key: await repos.accounts.createKey(id) };
      });
    }
    case 'keys revoke': {
      if (!values.key) throw new UsageError('--key is required');
      const key = values.key;
      return withStore(async (repos) => {
        if (!(await repos.accounts.revokeKey(key))) throw new Error('no active key matches');
        return { revoked: true };
      });
    }
    case 'serve': {
      const { startEngine } = await import('../main.ts');
      const engine = await startEngine(loadConfig());
      let stopping = false;
      const stop = () => {
        // A second signal while draining: the operator wants out now.
        if (stopping) process.exit(1);
        stopping = true;
        const boundMs = engine.drainBoundMs();
        engine.ctx.logger.info({ graceMs: engine.ctx.config.drainGraceMs, boundMs }, 'draining');
        // close() keeps to its bound; should a step hang anyway, the process still ends.
        setTimeout(() => {
          engine.ctx.logger.error({ boundMs }, 'drain overran its bound: exiting without it');
          process.exit(1);
        }, boundMs + DRAIN_WATCHDOG_SLACK_MS).unref();
        engine.close().then(
          () => process.exit(0),
          (err: unknown) => {
            engine.ctx.logger.error({ err: (err as Error).message }, 'drain failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      // A renewed SIP TLS certificate is taken without a restart.
      process.on('SIGHUP', () => {
        try {
          engine.sip.reloadTls();
          engine.ctx.logger.info('SIP TLS certificate and key reloaded');
        } catch (err) {
          engine.ctx.logger.error({ err: (err as Error).message }, 'SIP TLS reload failed; the previous certificate stays in use');
        }
      });
      return undefined;
    }
    case 'replay': {
      if (!values.assistant) throw new UsageError('--assistant is required');
      if (!values.caller && !values.tape) throw new UsageError('--caller is required (or --tape with a recorded call tape)');
      const { runReplay, ReplayUsageError } = await import('../replay/replay.ts');
      return runReplay({ assistant: values.assistant, caller: values.caller, tape: values.tape, standIns: values['stand-ins'] ?? false }).catch((err: unknown) => {
        throw err instanceof ReplayUsageError ? new UsageError(err.message) : err;
      });
    }
    default:
      throw new UsageError(`unknown command: ${command || '(none)'}`);
  }
}

