import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openConfiguredStore } from '../store/open-store.ts';
import { createRepos } from '../store/index.ts';
import { systemClock } from '../util/clock.ts';
import { parseDollars, toDollars } from '../util/money.ts';
import { secretViewOf } from '../api/routes/webhook-secret.ts';
import { COMMANDS, commandHelp, findCommand, USAGE, type CommandName } from './help.ts';

export { USAGE } from './help.ts';

/**
 * The `switchboard` command. Each command prints one JSON object on stdout and exits 0, or an
 * error on stderr and exits non-zero; `help` and `--help` print text on stdout. Every command
 * says on stderr which data directory it uses, and warns when it had to create a new store there
 * (a mistyped SWITCHBOARD_DATA_DIR otherwise looks like an empty engine). Store commands work while
 * the engine runs (SQLite WAL). docs/CLI.md is the reference.
 */
export class UsageError extends Error {}

/** Text for stdout as it is (help), where every other result is JSON. */
export class HelpText {
  constructor(readonly text: string) {}
}

/** Where the CLI's notes go (stderr); tests and embedders may pass their own. */
export interface CliIo {
  note(line: string): void;
}

const stderrIo: CliIo = { note: (line) => process.stderr.write(`switchboard: ${line}\n`) };

/** How far past the drain's own bound the `serve` watchdog lets it run before exiting anyway. */
const DRAIN_WATCHDOG_SLACK_MS = 2_000;

/** The store file under a data directory (src/store/db.ts). */
const STORE_FILE = 'switchboard.db';

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

function hours(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 24 * 30) throw new UsageError(`${flag} must be a number of hours from 0 to 720`);
  return n;
}

/** Says which data directory is used; warns when no store was there yet. Returns the directory. */
export function announceDataDir(io: CliIo, dataDir: string): string {
  const existed = fs.existsSync(path.join(dataDir, STORE_FILE));
  io.note(`data directory ${dataDir}`);
  if (!existed) {
    io.note(`warning: no store in ${dataDir}; a new, empty one is created there (set SWITCHBOARD_DATA_DIR to use another)`);
  }
  return dataDir;
}

/** Names the PostgreSQL database in use: host, port and database, never the user or password. */
export function announceDatabase(io: CliIo, databaseUrl: string): void {
  const u = new URL(databaseUrl);
  io.note(`database PostgreSQL ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`);
}

async function withStore<T>(io: CliIo, fn: (repos: ReturnType<typeof createRepos>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  if (config.databaseUrl !== undefined) announceDatabase(io, config.databaseUrl);
  else announceDataDir(io, config.dataDir);
  const { store, secrets } = await openConfiguredStore(config);
  try {
    return await fn(createRepos(store, systemClock, secrets));
  } finally {
    await store.close();
  }
}

/** Splits argv into the command's name and the rest; undefined name when none matches. */
function split(argv: string[]): { name: CommandName | undefined; words: string[]; rest: string[] } {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-') || words.length === 2) break;
    words.push(a);
  }
  for (let n = words.length; n > 0; n--) {
    const name = findCommand(words.slice(0, n).join(' '));
    if (name) return { name, words: words.slice(0, n), rest: argv.slice(n) };
  }
  return { name: undefined, words, rest: argv.slice(words.length) };
}

/** The options of every command; an unknown one, or a value that looks like an option, is a usage error. */
function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        help: { type: 'boolean', short: 'h' },
        name: { type: 'string' },
        balance: { type: 'string' },
        account: { type: 'string' },
        set: { type: 'string' },
        add: { type: 'string' },
        key: { type: 'string' },
        rotate: { type: 'boolean' },
        force: { type: 'boolean' },
        'overlap-hours': { type: 'string' },
        assistant: { type: 'string' },
        caller: { type: 'string' },
        tape: { type: 'string' },
        'stand-ins': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function run(argv: string[], io: CliIo = stderrIo): Promise<unknown> {
  if (argv.length > 0 && (argv[0] === '--help' || argv[0] === '-h')) return new HelpText(USAGE);
  const { name, words, rest } = split(argv);
  if (!name) {
    const given = words.join(' ') || argv[0] || '(none)';
    throw new UsageError(argv.length === 0 ? 'no command given' : `unknown command: ${given}`);
  }
  if (name === 'help') {
    if (rest.length === 0) return new HelpText(USAGE);
    const topic = split(rest).name;
    if (!topic || topic === 'help') throw new UsageError(`no help for: ${rest.join(' ')}`);
    return new HelpText(commandHelp(topic));
  }
  const { values } = parse(rest);
  if (values.help) return new HelpText(commandHelp(name));
  // An option of another command is a mistake here, not something to ignore.
  const allowed = new Set<string>(COMMANDS[name].options.map((o) => o.flag));
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined && k !== 'help' && !allowed.has(`--${k}`)) throw new UsageError(`--${k} is not an option of ${name}`);
  }

  switch (name) {
    case 'accounts create': {
      if (!values.name?.trim()) throw new UsageError('--name is required');
      const accountName = values.name.trim();
      const balance = values.balance === undefined ? 0 : dollars('--balance', values.balance);
      if (balance < 0) throw new UsageError('--balance may not be negative');
      return withStore(io, async (repos) => {
        const account = await repos.accounts.create(accountName);
        if (balance > 0) await repos.ledger.adjust(account.id, balance, 'initial balance', 'operator:cli');
        return { account_id: account.id, api_key: await repos.accounts.createKey(account.id) };
      });
    }
    case 'accounts list':
      return withStore(io, async (repos) => ({
        accounts: await Promise.all((await repos.accounts.list()).map(async (a) => ({
          account_id: a.id,
          name: a.name,
          balance: toDollars(await repos.ledger.balance(a.id)),
          active_keys: a.activeKeys,
          created_at: new Date(a.createdAt).toISOString(),
        }))),
      }));
    case 'accounts balance': {
      const id = accountId(values.account);
      if (values.set !== undefined && values.add !== undefined) throw new UsageError('use --set or --add, not both');
      return withStore(io, async (repos) => {
        if (!(await repos.accounts.get(id))) throw new Error(`account ${id} not found`);
        if (values.set !== undefined) {
          const target = dollars('--set', values.set);
          if (target < 0) throw new UsageError('--set may not be negative');
          await repos.ledger.setBalance(id, target, 'balance set by operator', 'operator:cli');
        }
        if (values.add !== undefined) await repos.ledger.adjust(id, dollars('--add', values.add), 'top-up by operator', 'operator:cli');
        return { account_id: id, balance: toDollars(await repos.ledger.balance(id)) };
      });
    }
    case 'keys create': {
      const id = accountId(values.account);
      return withStore(io, async (repos) => {
        if (!(await repos.accounts.get(id))) throw new Error(`account ${id} not found`);
        return { api_key: await repos.accounts.createKey(id) };
      });
    }
    case 'keys revoke': {
      if (!values.key) throw new UsageError('--key is required');
      const key = values.key;
      return withStore(io, async (repos) => {
        if (!(await repos.accounts.revokeKey(key))) throw new Error('no active key matches');
        return { revoked: true };
      });
    }
    case 'webhooks secret': {
      const id = accountId(values.account);
      if (values['overlap-hours'] !== undefined && !values.rotate) throw new UsageError('--overlap-hours goes with --rotate');
      if (values.force && !values.rotate) throw new UsageError('--force goes with --rotate');
      const config = loadConfig();
      const overlapMs = values['overlap-hours'] === undefined ? config.webhookSecretOverlapMs : Math.round(hours('--overlap-hours', values['overlap-hours']) * 3_600_000);
      return withStore(io, async (repos) => {
        const state = values.rotate ? await repos.accounts.rotateWebhookSecret(id, overlapMs, values.force === true) : await repos.accounts.secretState(id);
        if (!state) throw new Error(`account ${id} not found`);
        return { account_id: id, rotated: values.rotate === true, ...secretViewOf(state, systemClock.now()) };
      });
    }
    case 'serve':
      return serve(io);
    case 'replay': {
      io.note('replay uses no data directory: it runs in memory and stores nothing');
      if (!values.assistant) throw new UsageError('--assistant is required');
      if (!values.caller && !values.tape) throw new UsageError('--caller is required (or --tape with a recorded call tape)');
      const { runReplay, ReplayUsageError } = await import('../replay/replay.ts');
      return runReplay({ assistant: values.assistant, caller: values.caller, tape: values.tape, standIns: values['stand-ins'] ?? false }).catch((err: unknown) => {
        throw err instanceof ReplayUsageError ? new UsageError(err.message) : err;
      });
    }
  }
}

async function serve(io: CliIo): Promise<undefined> {
  const config = loadConfig();
  if (config.databaseUrl !== undefined) announceDatabase(io, config.databaseUrl);
  announceDataDir(io, config.dataDir);
  const { startEngine } = await import('../main.ts');
  const engine = await startEngine(config);
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
