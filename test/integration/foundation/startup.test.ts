import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-start-'));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('serves /healthz, takes a CLI-made key for the API, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    child = spawn('npm', ['start', '--silent'], {
      env: {
        ...process.env,
        SWITCHBOARD_DATA_DIR: dataDir,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        SIP_HOST: '127.0.0.1',
        SIP_PORT: String(await freePort()),
        SIP_PUBLIC_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let health: unknown;
    for (let i = 0; i < 100 && health === undefined; i++) {
      await new Promise((r) => setTimeout(r, 200));
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        health = await res.json();
      } catch {
        // not up yet
      }
    }
    expect(health).toEqual({ status: 'ok', ready: true, draining: false });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('process_cpu_user_seconds_total');
    // The SIP edge's counters are served by the same registry.
    for (const name of ['switchboard_sip_abuse_bans_total', 'switchboard_sip_malformed_total', 'switchboard_sip_calls_rate_limited_total']) {
      expect(metrics).toContain(`# TYPE ${name} counter`);
    }

    // The README's newcomer path: an account from the CLI while the engine runs, then the API.
    const { stdout } = await exec(process.execPath, [path.resolve('bin/switchboard.js'), 'accounts', 'create', '--name', 'Newcomer', '--balance', '5'], {
      env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir },
    });
    const { api_key: key } = JSON.parse(stdout) as { api_key: string };
    const base = `http://127.0.0.1:${port}/api`;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const list = await fetch(`${base}/user/assistants`, { headers: auth });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-ratelimit-limit')).toBe('20');
    expect(await list.json()).toEqual({ assistants: [] });
    const created = await fetch(`${base}/user/assistant`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        name: 'Front desk', voice_id: 151, language_id: 1, type: 'inbound', mode: 'pipeline', timezone: 'Europe/Paris',
        initial_message: 'Hello!', system_prompt: 'Be brief.', llm_model_id: 1,
      }),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { data: { status: string } }).data.status).toBe('inactive');
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');

    const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
    // npm forwards SIGTERM to the engine, which drains and exits; npm then re-raises the signal.
    child.kill('SIGTERM');
    await exited;
    await new Promise((r) => setTimeout(r, 300));
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  }, 60_000);
});
