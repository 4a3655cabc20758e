import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseAllowList } from './net/outbound/cidr.ts';

const port = z.coerce.number().int().min(1).max(65535);
/** An IP address or a DNS name (RFC 1123 labels); no scheme, port or path. */
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const host = z.string().refine((h) => net.isIP(h) !== 0 || HOSTNAME.test(h), 'must be an IP address or a host name');
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

/** Live-call caps and the overload threshold, overridable per deployment (src/sip/server.ts). */
export const CALL_CAP_DEFAULTS = Object.freeze({ maxLiveCalls: 500, maxPerAccount: 200, maxPerTrunk: 200, maxLoopDelayMs: 50 });

const count = z.coerce.number().int().min(1);

/** Comma-separated addresses and CIDR ranges (`10.0.0.0/8,127.0.0.1`), every entry valid. */
const cidrList = z.string().superRefine((text, ctx) => {
  const { invalid } = parseAllowList(text);
  if (invalid.length > 0) ctx.addIssue({ code: 'custom', message: `not addresses or CIDR ranges: ${invalid.join(', ')}` });
});

function defaultPublicHost(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const addr of list ?? []) {
      if (addr.family === 'IPv4' && !addr.internal) return addr.address;
    }
  }
  return '127.0.0.1';
}

const schema = z
  .object({
    SWITCHBOARD_DATA_DIR: z.string().min(1).default('./data'),
    HTTP_HOST: host.default('0.0.0.0'),
    HTTP_PORT: port.default(8080),
    SIP_HOST: host.default('0.0.0.0'),
    SIP_PORT: port.default(5060),
    SIP_PUBLIC_HOST: host.optional(),
    RTP_PORT_MIN: port.default(20000),
    RTP_PORT_MAX: port.default(29999),
    SWITCHBOARD_RTP_THREAD: z.enum(['0', '1']).default('1'),
    SWITCHBOARD_RTP_NATIVE: z.enum(['0', '1']).default('1'),
    SWITCHBOARD_DSP_NATIVE: z.enum(['0', '1']).default('1'),
    SWITCHBOARD_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(200),
    SWITCHBOARD_DENOISER_BUSY_BATCH_MS: z.coerce.number().int().min(0).max(200).default(40),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    OPENAI_API_KEY: z.string().min(1).optional(),
    OPENAI_BASE_URL: optionalUrl,
    DEEPGRAM_API_KEY: z.string().min(1).optional(),
    DEEPGRAM_BASE_URL: optionalUrl,
    TWILIO_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.twilio.com'),
    SWITCHBOARD_PUBLIC_URL: optionalUrl,
    SWITCHBOARD_CATALOG: z.string().min(1).optional(),
    SWITCHBOARD_MAX_CALLS: count.default(CALL_CAP_DEFAULTS.maxLiveCalls),
    SWITCHBOARD_MAX_CALLS_PER_ACCOUNT: count.default(CALL_CAP_DEFAULTS.maxPerAccount),
    SWITCHBOARD_MAX_CALLS_PER_TRUNK: count.default(CALL_CAP_DEFAULTS.maxPerTrunk),
    SWITCHBOARD_MAX_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(CALL_CAP_DEFAULTS.maxLoopDelayMs),
    SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: cidrList.default(''),
  })
  .refine((c) => c.RTP_PORT_MIN < c.RTP_PORT_MAX, {
    path: ['RTP_PORT_MAX'],
    message: 'must be greater than RTP_PORT_MIN',
  })
  .refine((c) => (c.RTP_PORT_MAX - c.RTP_PORT_MIN) >= 3, {
    path: ['RTP_PORT_MIN'],
    message: 'range must hold at least two RTP/RTCP port pairs',
  });

export interface Config {
  dataDir: string;
  http: { host: string; port: number };
  sip: { host: string; port: number; publicHost: string };
  /**
   * `thread`: RTP sockets in their own I/O thread (src/media/rtp-io/thread-io.ts) rather than on
   * the event loop; `native`: that thread's sockets through native/rtp-udp when it is built.
   */
  rtp: { portMin: number; portMax: number; thread: boolean; native: boolean };
  /** The C DSP kernels of native/dsp (the denoiser's core) when built, else TypeScript; src/audio/native-dsp.ts. */
  dspNative: boolean;
  /** V8's old-generation growing factor as 1 + percent/100 (0: V8's own heuristic); see src/util/gc-tuning.ts. */
  heapGrowingPercent: number;
  /** Denoiser batches at most this often (ms) while the engine is busy; ≤ 20: never (src/call/wiring/engine-parts.ts). */
  denoiserBusyBatchMs: number;
  logLevel: string;
  openai: { apiKey?: string; baseUrl?: string };
  deepgram: { apiKey?: string; baseUrl?: string };
  twilio: { baseUrl: string };
  publicUrl: string;
  catalogFile?: string;
  /** Caps on live calls and the event-loop delay past which new calls are shed (0: off). */
  calls: { maxLiveCalls: number; maxPerAccount: number; maxPerTrunk: number; maxLoopDelayMs: number };
  /**
   * URLs customers give (webhooks, custom tools, a custom calendar endpoint) reach public
   * addresses only; these ranges are opened besides (src/net/outbound).
   */
  outbound: { allowCidrs: readonly string[] };
}

export class ConfigError extends Error {}

/** Parses the environment once; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${String(i.path[0] ?? 'environment')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const httpHostForUrl = e.HTTP_HOST === '0.0.0.0' ? '127.0.0.1' : e.HTTP_HOST;
  return Object.freeze({
    dataDir: path.resolve(e.SWITCHBOARD_DATA_DIR),
    http: { host: e.HTTP_HOST, port: e.HTTP_PORT },
    sip: { host: e.SIP_HOST, port: e.SIP_PORT, publicHost: e.SIP_PUBLIC_HOST ?? defaultPublicHost() },
    rtp: { portMin: e.RTP_PORT_MIN, portMax: e.RTP_PORT_MAX, thread: e.SWITCHBOARD_RTP_THREAD === '1', native: e.SWITCHBOARD_RTP_NATIVE === '1' },
    dspNative: e.SWITCHBOARD_DSP_NATIVE === '1',
    heapGrowingPercent: e.SWITCHBOARD_HEAP_GROWING_PERCENT,
    denoiserBusyBatchMs: e.SWITCHBOARD_DENOISER_BUSY_BATCH_MS,
    logLevel: e.LOG_LEVEL,
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
    deepgram: { apiKey: e.DEEPGRAM_API_KEY, baseUrl: e.DEEPGRAM_BASE_URL },
    twilio: { baseUrl: e.TWILIO_BASE_URL },
    publicUrl: (e.SWITCHBOARD_PUBLIC_URL ?? `http://${httpHostForUrl}:${e.HTTP_PORT}`).replace(/\/$/, ''),
    catalogFile: e.SWITCHBOARD_CATALOG,
    calls: {
      maxLiveCalls: e.SWITCHBOARD_MAX_CALLS,
      maxPerAccount: e.SWITCHBOARD_MAX_CALLS_PER_ACCOUNT,
      maxPerTrunk: e.SWITCHBOARD_MAX_CALLS_PER_TRUNK,
      maxLoopDelayMs: e.SWITCHBOARD_MAX_LOOP_DELAY_MS,
    },
    outbound: { allowCidrs: Object.freeze(parseAllowList(e.SWITCHBOARD_OUTBOUND_ALLOW_CIDRS).cidrs.map((c) => c.text)) },
  });
}
