/**
 * The engine as an operator runs it: `switchboard serve` in a child process of its own, on a
 * data dir and free loopback ports, with its providers pointed at the protocol stand-ins (through
 * the environment production reads). The test can SIGTERM it (a drain) or SIGKILL it (a crash)
 * and start another on the same data dir. The account is made straight in the store, the trunk
 * and the assistant through the REST API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { openStore } from '../../src/store/db.ts';
import { createRepos } from '../../src/store/index.ts';
import { systemClock } from '../../src/util/clock.ts';
import { dollarsToMicros } from '../../src/util/money.ts';
import { OpenAiRouter } from '../integration/e2e/openai-router.ts';
import { DeepgramStandIn } from './deepgram-stand-in.ts';
import { OpenAiAudioStandIn } from './openai-audio-stand-in.ts';
import { OpenAiStandIn } from './openai-stand-in.ts';

export const ENGINE_TRUNK_NUMBER = '+14155550177';

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** An HTTP server that takes every request and never answers it (a provider gone silent). */
class SilentServer {
  private readonly held = new Set<http.ServerResponse>();
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<SilentServer> {
    const server = http.createServer();
    const silent = new SilentServer(server);
    server.on('request', (_req, res: http.ServerResponse) => silent.held.add(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return silent;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** The stand-ins every engine process of a test talks to. */
export class Providers {
  private constructor(
    private readonly parts: { chat: OpenAiStandIn; silent: SilentServer; audio: OpenAiAudioStandIn; deepgram: DeepgramStandIn; router: OpenAiRouter },
  ) {}

  /** `silentLlm`: chat completions are taken and never answered (speech and STT still work). */
  static async start(opts: { silentLlm?: boolean } = {}): Promise<Providers> {
    const chat = await OpenAiStandIn.start();
    const silent = await SilentServer.start();
    const audio = await OpenAiAudioStandIn.start({ speech: { synth: 'tone' } });
    const deepgram = await DeepgramStandIn.start();
    const router = await OpenAiRouter.start({ '/chat': opts.silentLlm ? silent.baseUrl : chat.baseUrl, '/audio': audio.baseUrl });
    return new Providers({ chat, silent, audio, deepgram, router });
  }

  get env(): Record<string, string> {
    const { audio, deepgram, router } = this.parts;
    return {
      OPENAI_API_KEY: audio.apiKey,
      OPENAI_BASE_URL: router.baseUrl,
      DEEPGRAM_API_KEY: deepgram.options.apiKey,
      DEEPGRAM_BASE_URL: deepgram.url.replace(/^ws/, 'http'),
    };
  }

  async close(): Promise<void> {
    const { chat, silent, audio, deepgram, router } = this.parts;
    await Promise.allSettled([chat.close(), silent.close(), audio.close(), deepgram.close(), router.close()]);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the process was seen to exit. */
  atMs: number;
}

export class EngineProcess {
  readonly exited: Promise<Exit>;
  /** What the engine wrote (logs), for a failing test's message. */
  output = '';

  private constructor(
    readonly child: ChildProcess,
    readonly httpUrl: string,
    readonly sipPort: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, atMs: Date.now() })));
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  /**
   * Starts `switchboard serve` and waits for /healthz. `ports`: the HTTP and SIP ports to take
   * again (a node restarted in place behind a proxy that knows its address); default: free ones.
   */
  static async start(dataDir: string, env: Record<string, string>, ports?: { http: number; sip: number }): Promise<EngineProcess> {
    const httpPort = ports?.http ?? (await freePort());
    let sipPort = ports?.sip ?? (await freePort());
    while (sipPort === httpPort) sipPort = await freePort();
    const child = spawn(process.execPath, [path.resolve('bin/switchboard.js'), 'serve'], {
      env: {
        ...process.env,
        SWITCHBOARD_DATA_DIR: dataDir,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        SIP_HOST: '127.0.0.1',
        SIP_PORT: String(sipPort),
        SIP_PUBLIC_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        // These tests are about lifecycle, not load: a busy test machine must not get calls shed.
        SWITCHBOARD_MAX_LOOP_DELAY_MS: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const engine = new EngineProcess(child, `http://127.0.0.1:${httpPort}`, sipPort);
    let gone = false;
    void engine.exited.then(() => (gone = true));
    for (let i = 0; i < 600; i++) {
      if (gone) throw new Error(`the engine exited during start-up:\n${engine.output}`);
      try {
        if ((await fetch(`${engine.httpUrl}/healthz`)).ok) return engine;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    engine.child.kill('SIGKILL');
    throw new Error(`the engine did not come up in 60 s:\n${engine.output}`);
  }

  get target(): string {
    return `sip:${ENGINE_TRUNK_NUMBER}@127.0.0.1:${this.sipPort}`;
  }

  /** Sends `signal`; resolves with how and when the process ended (SIGKILL after `timeoutMs`). */
  async stop(signal: NodeJS.Signals, timeoutMs = 90_000): Promise<Exit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** An account with a key and `balance` dollars, made in the store before the engine starts. */
export async function seedAccount(dataDir: string, balanceDollars = 10): Promise<{ id: number; key: string }> {
  const store = openStore(dataDir);
  try {
    const repos = createRepos(store, systemClock);
    const row = await repos.accounts.create('lifecycle');
    await repos.ledger.adjust(row.id, dollarsToMicros(balanceDollars), 'test top-up');
    return { id: row.id, key: await repos.accounts.createKey(row.id) };
  } finally {
    await store.close();
  }
}

async function api(engine: EngineProcess, key: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${engine.httpUrl}/api${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A trunk trusting 127.0.0.1 and a pipeline assistant answering its number. */
export async function provisionInbound(engine: EngineProcess, key: string, over: Record<string, unknown> = {}): Promise<{ assistantId: number }> {
  const trunk = await api(engine, key, 'POST', '/user/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: ENGINE_TRUNK_NUMBER,
    sip_username: 'lifecycle',
    sip_password: 'lifecycle-secret',
    sip_address: '127.0.0.1',
    sip_calling_format: '+e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: ['127.0.0.1'],
    country_code: 'US',
  });
  if (trunk.status !== 201) throw new Error(`trunk: ${trunk.status} ${JSON.stringify(trunk.body)}`);
  const assistant = await api(engine, key, 'POST', '/user/assistant', {
    name: 'lifecycle desk',
    type: 'inbound',
    mode: 'pipeline',
    voice_id: 121,
    language_id: 1,
    transcriber_provider_id: 1,
    llm_model_id: 1,
    timezone: 'Europe/Paris',
    initial_message: 'Hello.',
    system_prompt: 'Be brief.',
    phone_number_id: trunk.body.data.phone_number_id,
    ...over,
  });
  if (assistant.status !== 201) throw new Error(`assistant: ${assistant.status} ${JSON.stringify(assistant.body)}`);
  return { assistantId: assistant.body.data.id as number };
}
