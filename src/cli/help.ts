/**
 * What `switchboard help` and `--help` print: one table of commands, their options and output,
 * from which both the usage summary and each command's help are made (docs/CLI.md says the same).
 */
export interface OptionHelp {
  flag: `--${string}`;
  /** The value's placeholder; absent for a switch. */
  arg?: string;
  help: string;
}

export interface CommandHelp {
  summary: string;
  /** The synopsis after the command name. */
  synopsis: string;
  options: OptionHelp[];
  output: string;
}

export const COMMANDS = {
  'accounts create': {
    summary: 'Create an account and its first API key.',
    synopsis: '--name NAME [--balance USD]',
    options: [
      { flag: '--name', arg: 'NAME', help: 'the account name (required)' },
      { flag: '--balance', arg: 'USD', help: 'starting balance in dollars, e.g. 25 or 12.50 (default 0)' },
    ],
    output: '{"account_id": N, "api_key": "sb_live_…"}; the key is shown this once and stored only as a hash',
  },
  'accounts list': {
    summary: 'List every account with its balance and number of active keys (no secrets).',
    synopsis: '',
    options: [],
    output: '{"accounts": [{"account_id", "name", "balance", "active_keys", "created_at"}, …]}',
  },
  'accounts balance': {
    summary: "Show, set or top up an account's balance.",
    synopsis: '--account N [--set USD | --add USD]',
    options: [
      { flag: '--account', arg: 'N', help: 'the account number (required)' },
      { flag: '--set', arg: 'USD', help: 'set the balance to this amount' },
      { flag: '--add', arg: 'USD', help: 'add this amount (negative to deduct)' },
    ],
    output: '{"account_id": N, "balance": USD}',
  },
  'keys create': {
    summary: 'Create another API key for an account.',
    synopsis: '--account N',
    options: [{ flag: '--account', arg: 'N', help: 'the account number (required)' }],
    output: '{"api_key": "sb_live_…"}; shown this once',
  },
  'keys revoke': {
    summary: 'Revoke an API key.',
    synopsis: '--key KEY',
    options: [{ flag: '--key', arg: 'KEY', help: 'the key to revoke (required)' }],
    output: '{"revoked": true}; exits 1 when no active key matches',
  },
  'webhooks secret': {
    summary: "Show an account's webhook signing secret, or rotate it.",
    synopsis: '--account N [--rotate [--overlap-hours H] [--force]]',
    options: [
      { flag: '--account', arg: 'N', help: 'the account number (required)' },
      { flag: '--rotate', help: 'make a new secret current; the replaced one keeps signing during the overlap' },
      { flag: '--overlap-hours', arg: 'H', help: 'with --rotate: how long the replaced secret keeps signing, 0 to 720 (default SWITCHBOARD_WEBHOOK_SECRET_OVERLAP_HOURS, 24)' },
      { flag: '--force', help: 'with --rotate: rotate even while an earlier rotation still overlaps (its older secret stops signing); for a leaked secret use --force --overlap-hours 0' },
    ],
    output: '{"account_id", "rotated", "webhook_secret", "previous_secret_valid_until"}',
  },
  serve: {
    summary: 'Run the engine: SIP, media and the REST API, until SIGTERM or SIGINT (which drain live calls first).',
    synopsis: '',
    options: [],
    output: 'logs (JSON lines) on stdout; nothing else',
  },
  replay: {
    summary: 'Run an assistant against a recorded caller (WAV) or call tape, offline.',
    synopsis: '--assistant FILE.json (--caller AUDIO.wav | --tape CALL.tape.json) [--stand-ins]',
    options: [
      { flag: '--assistant', arg: 'FILE.json', help: 'the assistant, as GET /user/assistant/{id} returns it (required)' },
      { flag: '--caller', arg: 'AUDIO.wav', help: "the caller's audio" },
      { flag: '--tape', arg: 'CALL.tape.json', help: 'a recorded call tape (docs/CALL-TAPE.md)' },
      { flag: '--stand-ins', help: 'use built-in offline providers instead of the configured ones' },
    ],
    output: 'the replayed conversation as JSON',
  },
  help: {
    summary: 'Show this summary, or one command’s help.',
    synopsis: '[COMMAND]',
    options: [],
    output: 'text',
  },
} satisfies Record<string, CommandHelp>;

export type CommandName = keyof typeof COMMANDS;

export function findCommand(name: string): CommandName | undefined {
  return Object.hasOwn(COMMANDS, name) ? (name as CommandName) : undefined;
}

const line = (name: string, c: CommandHelp) => `  switchboard ${name}${c.synopsis ? ` ${c.synopsis}` : ''}`;

export const USAGE = [
  'usage:',
  ...Object.entries(COMMANDS).map(([name, c]) => line(name, c)),
  '',
  'Every command takes --help (-h). Store commands print which data directory they use on stderr',
  '(SWITCHBOARD_DATA_DIR, default ./data) and warn when they create a new store there.',
].join('\n');

export function commandHelp(name: CommandName): string {
  const c: CommandHelp = COMMANDS[name];
  const width = Math.max(0, ...c.options.map((o) => `${o.flag}${o.arg ? ` ${o.arg}` : ''}`.length));
  const options = c.options.map((o) => `  ${`${o.flag}${o.arg ? ` ${o.arg}` : ''}`.padEnd(width)}  ${o.help}`);
  return [
    `usage: ${line(name, c).trim()}`,
    '',
    c.summary,
    ...(options.length > 0 ? ['', 'options:', ...options, `  ${'--help, -h'.padEnd(width)}  this help`] : ['', 'options:', '  --help, -h  this help']),
    '',
    `output: ${c.output}`,
  ].join('\n');
}
