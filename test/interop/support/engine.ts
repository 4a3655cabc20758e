/**
 * The real engine, in-process: startEngine() from src/main.ts on a temp data dir, HTTP, SIP and
 * RTP on free loopback ports; an account with a key and balance; REST calls with that key. The
 * SIP trunk, phone number and assistants are created through the REST API like an operator would.
 */
import { loadConfig } from '../../../src/config.ts';
import { startEngine, type Engine } from '../../../src/main.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { engineRtpRange, freePort, LOOPBACK, tempDir, within } from './tools.ts';

export interface ApiResponse {
  status: number;
  body: any;
}

export interface TestEngine {
  engine: Engine;
  sipPort: number;
  httpUrl: string;
  account: { id: number; key: string };
  api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<ApiResponse>;
  /** POST that must succeed (2xx); fails the test with the body otherwise. */
  create(url: string, body: unknown): Promise<ApiResponse['body']>;
  /** A record from GET /user/calls/{id}, polled until `done` holds (bounded). */
  waitCall(id: number, done: (call: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Where the engine's SIP (and RTP) listen and what it advertises; 127.0.0.1 for all by default. */
export interface TestEngineNet {
  sipHost?: string;
  publicHost?: string;
  publicHost6?: string;
}

/** `env`: more settings for the engine (SIP over TLS, say). */
export async function startTestEngine(net: TestEngineNet = {}, env: Record<string, string> = {}): Promise<TestEngine> {
  const data = tempDir('engine');
  const sipPort = await freePort();
  let httpPort = await freePort();
  while (httpPort === sipPort) httpPort = await freePort();
  const rtp = engineRtpRange();
  const config = loadConfig({
    SWITCHBOARD_DATA_DIR: data.path,
    HTTP_HOST: LOOPBACK,
    HTTP_PORT: String(httpPort),
    SIP_HOST: net.sipHost ?? LOOPBACK,
    SIP_PORT: String(sipPort),
    SIP_PUBLIC_HOST: net.publicHost ?? LOOPBACK,
    ...(net.publicHost6 !== undefined ? { SIP_PUBLIC_HOST6: net.publicHost6 } : {}),
    RTP_PORT_MIN: String(rtp.minPort),
    RTP_PORT_MAX: String(rtp.maxPort),
    LOG_LEVEL: process.env.INTEROP_LOG_LEVEL ?? 'warn',
    ...env,
  });
  let engine: Engine;
  try {
    engine = await startEngine(config);
  } catch (err) {
    data.remove();
    throw err;
  }
  const closeAll = async () => {
    // No drain grace: a test's calls are over (or must not hold the teardown up).
    await engine.close(0);
    data.remove();
  };
  try {
    await assertSipListening(sipPort);
  } catch (err) {
    await closeAll();
    throw err;
  }
  const accountRow = await engine.ctx.repos.accounts.create('interop');
  await engine.ctx.repos.ledger.adjust(accountRow.id, dollarsToMicros(20), 'interop top-up');
  const account = { id: accountRow.id, key: await engine.ctx.repos.accounts.createKey(accountRow.id) };

  const api: TestEngine['api'] = async (method, url, body) => {
    const res = await fetch(`${engine.httpUrl}/api${url}`, {
      method,
      headers: { authorization: `Bearer ${account.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed };
  };
  return {
    engine,
    sipPort,
    httpUrl: engine.httpUrl,
    account,
    api,
    async create(url, body) {
      const res = await api('POST', url, body);
      if (res.status < 200 || res.status > 299) throw new Error(`POST ${url} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async waitCall(id, done, timeoutMs = 8000) {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, unknown> | undefined;
      for (;;) {
        const res = await api('GET', `/user/calls/${id}`);
        if (res.status === 200) {
          last = res.body as Record<string, unknown>;
          if (done(last)) return last;
        }
        if (Date.now() > deadline) throw new Error(`call ${id} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(last ?? res.body)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: closeAll,
  };
}

/** An OPTIONS from a throwaway UA: the engine's SIP edge must answer (any final status). */
async function assertSipListening(port: number): Promise<void> {
  const probe = await UserAgent.create({ host: LOOPBACK, port: 0, transports: ['udp'], userName: 'probe', timers: { t1Ms: 100 } });
  try {
    const res = await within(probe.options(`sip:${LOOPBACK}:${port}`), 5000, 'an OPTIONS answer');
    if (res.status === 408 || res.status === 503) throw new Error(`status ${res.status}`);
  } catch (err) {
    throw new Error(
      `the engine started by startEngine() does not answer SIP on ${LOOPBACK}:${port} (${(err as Error).message}); ` +
        'src/main.ts must start the SIP server on SIP_HOST:SIP_PORT',
    );
  } finally {
    await probe.close();
  }
}

/** An `ip` trunk for 127.0.0.1 (inbound allowed from it; outbound INVITEs go to 127.0.0.1:5060). */
export function ipTrunkBody(phoneNumber: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sip_trunk_type: 'number',
    phone_number: phoneNumber,
    nickname: 'interop loopback',
    sip_username: 'interop',
    sip_password: 'interop-secret',
    sip_address: LOOPBACK,
    sip_calling_format: 'e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: [LOOPBACK],
    ...over,
  };
}

export function assistantBody(type: 'inbound' | 'outbound', phoneNumberId: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `interop ${type}`,
    voice_id: 121,
    language_id: 1,
    type,
    mode: 'pipeline',
    timezone: 'Europe/Paris',
    initial_message: 'Hello from the interop test.',
    system_prompt: 'You are a test assistant.',
    llm_model_id: 1,
    phone_number_id: phoneNumberId,
    ...over,
  };
}
