/**
 * coturn (Debian `coturn`, the `turnserver` binary) on loopback for browser-call tests: one
 * long-term-credential user, relay addresses on 127.0.0.1, loopback peers allowed (both ends of
 * the test are on this machine), no TLS, no CLI, a temp dir for its files. Missing binary:
 * `turnAvailable` is false and the suite skips with the reason printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TURNSERVER = process.env.TURNSERVER_PATH ?? '/usr/bin/turnserver';
export const turnAvailable = fs.existsSync(TURNSERVER);
if (!turnAvailable) console.warn(`[TURN tests skipped] no turnserver at ${TURNSERVER} (apt-get install coturn)`);

export interface TurnServer {
  url: string;
  username: string;
  credential: string;
  /** What turnserver logged so far (allocations show up here). */
  log(): string;
  close(): Promise<void>;
}

export async function startTurnServer(port: number, relayPorts: [number, number]): Promise<TurnServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-turn-'));
  const username = 'switchboard';
  const credential = 'turn-secret';
  const logFile = path.join(dir, 'turn.log');
  const child: ChildProcess = spawn(
    TURNSERVER,
    [
      '-n',
      '--listening-ip=127.0.0.1',
      '--relay-ip=127.0.0.1',
      `--listening-port=${port}`,
      `--min-port=${relayPorts[0]}`,
      `--max-port=${relayPorts[1]}`,
      '--lt-cred-mech',
      `--user=${username}:${credential}`,
      '--realm=switchboard.test',
      '--allow-loopback-peers',
      '--no-cli',
      '--no-tls',
      '--no-dtls',
      '--no-tcp-relay',
      `--userdb=${path.join(dir, 'turndb')}`,
      `--pidfile=${path.join(dir, 'turn.pid')}`,
      `--log-file=${logFile}`,
      '--simple-log',
      '--verbose',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const log = (): string => {
    let file = '';
    try {
      file = fs.readFileSync(logFile, 'utf8');
    } catch {
      // not written yet
    }
    return output + file;
  };
  // Ready once it listens (bounded: 10 s).
  const deadline = Date.now() + 10_000;
  while (!/listener opened on|IPv4\. UDP listener opened/i.test(log())) {
    if (child.exitCode !== null) throw new Error(`turnserver exited (${child.exitCode}): ${log().slice(-2000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`turnserver did not start: ${log().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `turn:127.0.0.1:${port}?transport=udp`,
    username,
    credential,
    log,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
