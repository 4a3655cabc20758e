import { ConfigError } from './config.ts';
import { HelpText, run, UsageError, USAGE } from './cli/commands.ts';

/** Entry of the `switchboard` command (`npx switchboard`, `npm start` runs `serve`). */
run(process.argv.slice(2)).then(
  (out) => {
    if (out instanceof HelpText) process.stdout.write(`${out.text}\n`);
    else if (out !== undefined) process.stdout.write(`${JSON.stringify(out)}\n`);
  },
  (err: unknown) => {
    const usage = err instanceof UsageError;
    const message = usage || err instanceof ConfigError ? (err as Error).message : String((err as Error).message ?? err);
    process.stderr.write(`switchboard: ${message}\n${usage ? `${USAGE}\n` : ''}`);
    process.exit(usage ? 2 : 1);
  },
);
