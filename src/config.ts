import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseAllowList } from './net/outbound/cidr.ts';
import { parseKeyValueList, tracesUrl, TRACES_SAMPLERS, type TracingConfig } from './telemetry/otel-env.ts';

const port = z.coerce.number().int().min(1).max(65535);
/** An IP address or a DNS name (RFC 1123 labels); no scheme, port or path. */
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const host = z.string().refine((h) => net.isIP(h) !== 0 || HOSTNAME.test(h), 'must be an IP address or a host name');
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

/**
 * Live-call caps, new-call rates and the overload threshold, overridable per deployment
 * (src/sip/server.ts). 10 new calls a second per trunk is the top of the call-per-second tiers
 * carriers commonly sell per trunk, and 20 at once covers a cluster of calls (a campaign start, a
 * retry wave after a blip); a flood from one trunk then needs 18 s or more to fill its 200-call cap
 * instead of a fraction of a second, while the box sustains 100 setups a second (docs/bench-history.md).
 * The process-wide rate is off (0): the live-call cap and the event-loop delay already measure
 * what the box can take; a fixed global rate would sit either above that or below it.
 */
export const CALL_CAP_DEFAULTS = Object.freeze({
  maxLiveCalls: 500,
  maxPerAccount: 200,
  maxPerTrunk: 200,
  maxLoopDelayMs: 50,
  maxCallRatePerTrunk: 10,
  maxCallRate: 0,
});

/** A burst left unset is two seconds' worth of the rate (at least one call). */
export const defaultBurst = (perSec: number): number => Math.max(1, Math.ceil(perSec * 2));

const count = z.coerce.number().int().min(1);
/** SWITCHBOARD_WEBRTC_ICE_SERVERS: a JSON array of RTCIceServer (stun:, turn:, turns: URLs). */
const iceServerSchema = z.object({
  urls: z.union([z.string().regex(/^(stun|stuns|turn|turns):/), z.array(z.string().regex(/^(stun|stuns|turn|turns):/)).min(1)]),
  username: z.string().optional(),
  credential: z.string().optional(),
});
const iceServersJson = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of ICE servers' });
      return z.NEVER;
    }
  })
  .pipe(z.array(iceServerSchema).max(8));
const callsPerSec = z.coerce.number().min(0).max(100_000);

/** Bounds on SIP over TCP (src/sip/tcp-admission.ts, src/sip/stream-deadline.ts, src/sip/fd-budget.ts). */
export const SIP_TCP_DEFAULTS = Object.freeze({ maxPerSource: 64, acceptRatePerSecond: 10, idleTimeoutMs: 300_000, messageTimeoutMs: 10_000 });

/** What names a node on call records and log lines: a host name's characters, bounded. */
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The host name, cut to what SWITCHBOARD_NODE_ID accepts (a container's short id, a server's name). */
export function defaultNodeId(hostname = os.hostname()): string {
  const cleaned = hostname.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64);
  return cleaned.length > 0 ? cleaned : 'switchboard';
}

/**
 * `host:port` (or a bare host: port 5060) for SIP_OUTBOUND_PROXY; IPv6 as `[v6]:port` or `[v6]`.
 * Undefined when it is not one.
 */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) return undefined;
  const h = m[1]!;
  const bracketed = text.startsWith('[');
  if (bracketed ? !net.isIPv6(h) : net.isIP(h) === 0 && !HOSTNAME.test(h)) return undefined;
  const p = m[2] === undefined ? 5060 : Number(m[2]);
  if (!Number.isInteger(p) || p < 1 || p > 65535) return undefined;
  return { host: h, port: p };
}

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

/**
 * What IPv6 peers are told when SIP_PUBLIC_HOST6 is unset: nothing apart (undefined: the public
 * host for everyone) when the public host is IPv6 already or we do not listen on an IPv6 address;
 * else the IPv6 address SIP_HOST names (`::` names none).
 */
function defaultPublicHost6(sipHost: string, publicHost: string | undefined): string | undefined {
  if (publicHost !== undefined && net.isIPv6(publicHost)) return undefined;
  return net.isIPv6(sipHost) && sipHost !== '::' ? sipHost : undefined;
}

/** `k=v,k=v` (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES); the message never echoes a value. */
const keyValueList = z.string().superRefine((text, ctx) => {
  try {
    parseKeyValueList(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `must be key=value pairs separated by commas: ${(err as Error).message}` });
  }
});

/** A PostgreSQL connection URL; the message never echoes it (it may hold a password). */
const postgresUrl = z.string().refine((u) => {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(u).protocol);
  } catch {
    return false;
  }
}, 'must be a postgres:// or postgresql:// URL');

/** 32 bytes in base64 (e.g. `openssl rand -base64 32`); the message never echoes the key. */
const secretKey = z.string().refine((k) => /^[A-Za-z0-9+/]+={0,2}$/.test(k.trim()) && Buffer.from(k.trim(), 'base64').length === 32, 'must be 32 bytes in base64 (openssl rand -base64 32)');

const schema = z
  .object({
    SWITCHBOARD_DATA_DIR: z.string().min(1).default('./data'),
    SWITCHBOARD_NODE_ID: z.string().regex(NODE_ID, 'must be 1 to 64 letters, digits, dots, dashes or underscores').optional(),
    // PostgreSQL instead of the embedded SQLite store (src/store/open-store.ts, docs/POSTGRES.md).
    SWITCHBOARD_DATABASE_URL: postgresUrl.optional(),
    // The key sealing secrets at rest; required with PostgreSQL so every node shares it.
    SWITCHBOARD_SECRET_KEY: secretKey.optional(),
    HTTP_HOST: host.default('0.0.0.0'),
    HTTP_PORT: port.default(8080),
    SIP_HOST: host.default('0.0.0.0'),
    SIP_PORT: port.default(5060),
    SIP_PUBLIC_HOST: host.optional(),
    SIP_TRUSTED_PROXIES: cidrList.default(''),
    SIP_OUTBOUND_PROXY: z.string().transform((text, ctx) => {
      const parsed = parseHostPort(text);
      if (!parsed) ctx.addIssue({ code: 'custom', message: 'must be host:port (an IP address or host name, then a port; [v6]:port for IPv6)' });
      return parsed ?? z.NEVER;
    }).optional(),
    SIP_PUBLIC_HOST6: z.string().refine((h) => net.isIPv6(h) && !/^::ffff:/i.test(h), 'must be an IPv6 address').optional(),
    SIP_TLS_PORT: z.coerce.number().int().min(0).max(65535).default(5061),
    SIP_TLS_CERT: z.string().min(1).optional(),
    SIP_TLS_KEY: z.string().min(1).optional(),
    SIP_TLS_CA: z.string().min(1).optional(),
    RTP_PUBLIC_HOST: host.optional(),
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
    SWITCHBOARD_DRAIN_SECONDS: z.coerce.number().int().min(0).max(3600).default(20),
    SWITCHBOARD_CALL_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
    SWITCHBOARD_WEBHOOK_SECRET_OVERLAP_HOURS: z.coerce.number().min(0).max(24 * 30).default(24),
    SWITCHBOARD_LEASE_SECONDS: z.coerce.number().min(1).max(3600).default(30),
    SIP_TCP_MAX_CONNECTIONS: count.optional(),
    SIP_TCP_MAX_PER_SOURCE: count.default(SIP_TCP_DEFAULTS.maxPerSource),
    SIP_TCP_ACCEPT_RATE: z.coerce.number().positive().max(100_000).default(SIP_TCP_DEFAULTS.acceptRatePerSecond),
    SIP_TCP_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(86_400_000).default(SIP_TCP_DEFAULTS.idleTimeoutMs),
    SIP_TCP_MESSAGE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(SIP_TCP_DEFAULTS.messageTimeoutMs),
    SIP_TCP_FD_RESERVE: z.coerce.number().int().min(0).optional(),
    SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: callsPerSec.default(CALL_CAP_DEFAULTS.maxCallRatePerTrunk),
    SWITCHBOARD_MAX_CALL_BURST_PER_TRUNK: count.optional(),
    SWITCHBOARD_MAX_CALL_RATE: callsPerSec.default(CALL_CAP_DEFAULTS.maxCallRate),
    SWITCHBOARD_MAX_CALL_BURST: count.optional(),
    SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: cidrList.default(''),
    // Browser calls over WebRTC (src/webrtc, docs/BROWSER-CALLS.md).
    SWITCHBOARD_WEBRTC_ICE_SERVERS: iceServersJson.default([]),
    SWITCHBOARD_WEBRTC_PORT_MIN: port.optional(),
    SWITCHBOARD_WEBRTC_PORT_MAX: port.optional(),
    SWITCHBOARD_WEBRTC_ALLOWED_ORIGINS: z.string().default(''),
    // Browser pages on other origins reading the API (src/api/cors.ts): none unless listed.
    SWITCHBOARD_CORS_ORIGINS: z.string().default(''),
    // Several engine nodes as one service (src/cluster, docs/REDIS.md): shared live state in Redis.
    SWITCHBOARD_REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
    SWITCHBOARD_NODE_LEASE_SECONDS: z.coerce.number().int().min(2).max(300).default(10),
    // OpenTelemetry traces (src/telemetry, docs/TRACING.md): off unless an endpoint is set.
    OTEL_SDK_DISABLED: z.enum(['true', 'false']).default('false'),
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
    OTEL_EXPORTER_OTLP_HEADERS: keyValueList.default(''),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList.default(''),
    OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().min(1).max(600_000).default(10_000),
    OTEL_SERVICE_NAME: z.string().min(1).default('switchboard'),
    OTEL_RESOURCE_ATTRIBUTES: keyValueList.default(''),
    OTEL_TRACES_SAMPLER: z.enum(TRACES_SAMPLERS as [string, ...string[]]).default('parentbased_always_on'),
    OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
    OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(600_000).default(5_000),
    // Recordings and call tapes on S3-compatible object storage (src/blobs, docs/OBJECT-STORAGE.md): off unless a bucket is set.
    SWITCHBOARD_S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z 0-9 . -)').optional(),
    SWITCHBOARD_S3_ENDPOINT: optionalUrl,
    SWITCHBOARD_S3_REGION: z.string().regex(/^[a-z0-9-]{1,40}$/, 'must be a region name such as us-east-1').default('us-east-1'),
    SWITCHBOARD_S3_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(2_000),
    SWITCHBOARD_S3_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(300_000),
    AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
    AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    AWS_SESSION_TOKEN: z.string().min(1).optional(),
  })
  .refine((c) => c.SWITCHBOARD_S3_ENDPOINT === undefined || c.SWITCHBOARD_S3_BUCKET !== undefined, {
    path: ['SWITCHBOARD_S3_BUCKET'],
    message: 'SWITCHBOARD_S3_ENDPOINT is set: name the bucket too',
  })
  .refine((c) => (c.AWS_ACCESS_KEY_ID === undefined) === (c.AWS_SECRET_ACCESS_KEY === undefined), {
    path: ['AWS_ACCESS_KEY_ID'],
    message: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither (then the SDK looks for credentials itself)',
  })
  .refine((c) => (c.SIP_TLS_CERT === undefined) === (c.SIP_TLS_KEY === undefined), {
    path: ['SIP_TLS_CERT'],
    message: 'SIP_TLS_CERT and SIP_TLS_KEY go together: set both for a TLS listener, or neither',
  })
  .refine((c) => (c.SWITCHBOARD_WEBRTC_PORT_MIN === undefined) === (c.SWITCHBOARD_WEBRTC_PORT_MAX === undefined), {
    path: ['SWITCHBOARD_WEBRTC_PORT_MAX'],
    message: 'set both SWITCHBOARD_WEBRTC_PORT_MIN and SWITCHBOARD_WEBRTC_PORT_MAX, or neither',
  })
  .refine((c) => c.SWITCHBOARD_WEBRTC_PORT_MIN === undefined || c.SWITCHBOARD_WEBRTC_PORT_MIN < c.SWITCHBOARD_WEBRTC_PORT_MAX!, {
    path: ['SWITCHBOARD_WEBRTC_PORT_MAX'],
    message: 'must be greater than SWITCHBOARD_WEBRTC_PORT_MIN',
  })
  .refine((c) => c.SWITCHBOARD_DATABASE_URL === undefined || c.SWITCHBOARD_SECRET_KEY !== undefined, {
    path: ['SWITCHBOARD_SECRET_KEY'],
    message:
      'required with SWITCHBOARD_DATABASE_URL: every node sharing the database must seal secrets with the same key (32 bytes in base64, e.g. openssl rand -base64 32)',
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
  /** SWITCHBOARD_NODE_ID (default: the host name): on every call record (`node_id`) and log line (`node`). */
  nodeId: string;
  /** SWITCHBOARD_DATABASE_URL: PostgreSQL when set, else the SQLite store in `dataDir`. */
  databaseUrl?: string;
  /** SWITCHBOARD_SECRET_KEY: the 32-byte sealing key; unset, the data directory's `secret.key`. */
  secretKey?: Buffer;
  http: { host: string; port: number };
  /**
   * `tls`: SIP over TLS. A listener on `tls.port` (0: ephemeral) when cert and key (PEM files)
   * are set; `caFile` adds trust for outbound connections beside the system's store.
   */
  /**
   * `outboundProxy`: SIP_OUTBOUND_PROXY, where every out-of-dialog request we send goes first
   * (a preloaded `Route: <sip:host:port;lr>`), the Request-URI still naming the carrier.
   */
  sip: { host: string; port: number; publicHost: string; publicHost6?: string | undefined; trustedProxies?: string; outboundProxy?: { host: string; port: number } | undefined; tcp: SipTcpConfig; tls?: { port: number; certFile?: string; keyFile?: string; caFile?: string } };
  /**
   * `thread`: RTP sockets in their own I/O thread (src/media/rtp-io/thread-io.ts) rather than on
   * the event loop; `native`: that thread's sockets through native/rtp-udp when it is built.
   */
  /** `publicHost`: RTP_PUBLIC_HOST, the media address SDP names to IPv4 peers (undefined: SIP_PUBLIC_HOST). */
  rtp: { portMin: number; portMax: number; thread: boolean; native: boolean; publicHost?: string | undefined };
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
  /**
   * Caps on live calls and the event-loop delay past which new calls are shed (0: off); new-call
   * rates per trunk and for the process (perSec 0: off), src/call/call-rate-limit.ts.
   */
  calls: {
    maxLiveCalls: number;
    maxPerAccount: number;
    maxPerTrunk: number;
    maxLoopDelayMs: number;
    ratePerTrunk: { perSec: number; burst: number };
    rate: { perSec: number; burst: number };
  };
  /**
   * URLs customers give (webhooks, custom tools, a custom calendar endpoint) reach public
   * addresses only; these ranges are opened besides (src/net/outbound).
   */
  outbound: { allowCidrs: readonly string[] };
  /** After SIGTERM, how long live calls may go on before they are hung up (src/util/drain-plan.ts). */
  drainGraceMs: number;
  /** How often live calls' records are stamped alive, so a crash-cut call ends by its real length (src/call/call-heartbeat.ts). */
  callHeartbeatMs: number;
  /** After a webhook secret rotation, how long the replaced secret still signs beside the new one (src/webhooks/secret-rotation.ts). */
  webhookSecretOverlapMs: number;
  /**
   * Work done once across the nodes sharing the database (docs/WORK-ONCE.md): this node's name as
   * a lease holder (SWITCHBOARD_NODE_ID, default the host name), and how long a lease lasts
   * unrenewed, i.e. how soon a dead node's work is taken over (SWITCHBOARD_LEASE_SECONDS).
   */
  cluster: {
    nodeId: string;
    /** Work leases (docs/WORK-ONCE.md): how long a dead node's sweeps, registrations, leads and webhook attempts stay its own. */
    leaseTtlMs: number;
    /** SWITCHBOARD_REDIS_URL: shared live state (docs/REDIS.md); unset, every limit and count stays in this process. */
    redisUrl?: string | undefined;
    /** A node that stops beating its Redis presence for this long no longer counts (its calls free their slots). */
    leaseMs: number;
  };
  /** OpenTelemetry traces over OTLP/HTTP; `enabled` false (the default) loads nothing (src/telemetry). */
  tracing?: TracingConfig;
  /**
   * Browser calls (src/webrtc): the ICE servers given to the browser and used by the engine's
   * peer connections, the UDP ports ICE may bind (undefined: any free port), and the origins
   * besides the engine's own that may open the signalling socket.
   */
  webrtc: { iceServers: readonly IceServerConfig[]; portRange?: [number, number] | undefined; allowedOrigins: readonly string[] };
  /** SWITCHBOARD_CORS_ORIGINS: origins whose pages may read the API (`*`: any); empty, CORS stays closed. */
  corsOrigins: readonly string[];
  /** Recordings and call tapes archived to S3-compatible storage; absent: they stay under the data dir (src/blobs). */
  s3?: S3Config;
}

/** One RTCIceServer (STUN or TURN), as the browser's RTCPeerConnection takes it. */
export interface IceServerConfig {
  urls: string | string[];
  username?: string | undefined;
  credential?: string | undefined;
}

/**
 * An S3-compatible bucket. `endpoint` (operator config, never customer input) selects path-style
 * addressing (MinIO, Ceph, Garage...); absent: AWS's own endpoint for `region`. `credentials`
 * absent: the AWS SDK's default chain (instance role, profile).
 */
export interface S3Config {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined } | undefined;
  /** Failed uploads and deletions are retried after base·2^(n-1) ms, at most `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
}

/**
 * Bounds on inbound SIP over TCP. `maxConnections` and `fdReserve` undefined: derived at start-up
 * from the process's descriptor limit (src/sip/fd-budget.ts).
 */
export interface SipTcpConfig {
  maxConnections?: number;
  maxPerSource: number;
  /** New connections per second per source (bursts of twice that). */
  acceptRatePerSecond: number;
  idleTimeoutMs: number;
  messageTimeoutMs: number;
  fdReserve?: number;
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
    nodeId: e.SWITCHBOARD_NODE_ID ?? defaultNodeId(),
    ...(e.SWITCHBOARD_DATABASE_URL !== undefined && { databaseUrl: e.SWITCHBOARD_DATABASE_URL }),
    ...(e.SWITCHBOARD_SECRET_KEY !== undefined && { secretKey: Buffer.from(e.SWITCHBOARD_SECRET_KEY.trim(), 'base64') }),
    http: { host: e.HTTP_HOST, port: e.HTTP_PORT },
    sip: {
      host: e.SIP_HOST,
      port: e.SIP_PORT,
      publicHost: e.SIP_PUBLIC_HOST ?? defaultPublicHost(),
      publicHost6: e.SIP_PUBLIC_HOST6 ?? defaultPublicHost6(e.SIP_HOST, e.SIP_PUBLIC_HOST),
      trustedProxies: e.SIP_TRUSTED_PROXIES,
      outboundProxy: e.SIP_OUTBOUND_PROXY,
      tls: { port: e.SIP_TLS_PORT, certFile: e.SIP_TLS_CERT, keyFile: e.SIP_TLS_KEY, caFile: e.SIP_TLS_CA },
      tcp: {
        maxConnections: e.SIP_TCP_MAX_CONNECTIONS,
        maxPerSource: e.SIP_TCP_MAX_PER_SOURCE,
        acceptRatePerSecond: e.SIP_TCP_ACCEPT_RATE,
        idleTimeoutMs: e.SIP_TCP_IDLE_TIMEOUT_MS,
        messageTimeoutMs: e.SIP_TCP_MESSAGE_TIMEOUT_MS,
        fdReserve: e.SIP_TCP_FD_RESERVE,
      },
    },
    rtp: { portMin: e.RTP_PORT_MIN, portMax: e.RTP_PORT_MAX, thread: e.SWITCHBOARD_RTP_THREAD === '1', native: e.SWITCHBOARD_RTP_NATIVE === '1', publicHost: e.RTP_PUBLIC_HOST },
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
      ratePerTrunk: {
        perSec: e.SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK,
        burst: e.SWITCHBOARD_MAX_CALL_BURST_PER_TRUNK ?? defaultBurst(e.SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK),
      },
      rate: { perSec: e.SWITCHBOARD_MAX_CALL_RATE, burst: e.SWITCHBOARD_MAX_CALL_BURST ?? defaultBurst(e.SWITCHBOARD_MAX_CALL_RATE) },
    },
    drainGraceMs: e.SWITCHBOARD_DRAIN_SECONDS * 1000,
    callHeartbeatMs: e.SWITCHBOARD_CALL_HEARTBEAT_SECONDS * 1000,
    cluster: {
      nodeId: e.SWITCHBOARD_NODE_ID ?? defaultNodeId(),
      leaseTtlMs: Math.round(e.SWITCHBOARD_LEASE_SECONDS * 1000),
      redisUrl: e.SWITCHBOARD_REDIS_URL,
      leaseMs: e.SWITCHBOARD_NODE_LEASE_SECONDS * 1000,
    },
    webhookSecretOverlapMs: Math.round(e.SWITCHBOARD_WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000),
    outbound: { allowCidrs: Object.freeze(parseAllowList(e.SWITCHBOARD_OUTBOUND_ALLOW_CIDRS).cidrs.map((c) => c.text)) },
    tracing: tracingConfig(e),
    corsOrigins: Object.freeze(
      e.SWITCHBOARD_CORS_ORIGINS.split(',')
        .map((o) => o.trim().replace(/\/$/, ''))
        .filter((o) => o.length > 0),
    ),
    webrtc: {
      iceServers: Object.freeze(e.SWITCHBOARD_WEBRTC_ICE_SERVERS),
      portRange: e.SWITCHBOARD_WEBRTC_PORT_MIN !== undefined && e.SWITCHBOARD_WEBRTC_PORT_MAX !== undefined ? ([e.SWITCHBOARD_WEBRTC_PORT_MIN, e.SWITCHBOARD_WEBRTC_PORT_MAX] as [number, number]) : undefined,
      allowedOrigins: Object.freeze(
        e.SWITCHBOARD_WEBRTC_ALLOWED_ORIGINS.split(',')
          .map((o) => o.trim().replace(/\/$/, ''))
          .filter((o) => o.length > 0),
      ),
    },
    ...(e.SWITCHBOARD_S3_BUCKET !== undefined && { s3: s3Config(e, e.SWITCHBOARD_S3_BUCKET) }),
  });
}

function s3Config(e: z.infer<typeof schema>, bucket: string): S3Config {
  return Object.freeze({
    bucket,
    region: e.SWITCHBOARD_S3_REGION,
    endpoint: e.SWITCHBOARD_S3_ENDPOINT?.replace(/\/$/, ''),
    credentials:
      e.AWS_ACCESS_KEY_ID !== undefined && e.AWS_SECRET_ACCESS_KEY !== undefined
        ? Object.freeze({ accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, sessionToken: e.AWS_SESSION_TOKEN })
        : undefined,
    retryBaseMs: e.SWITCHBOARD_S3_RETRY_BASE_MS,
    retryMaxMs: Math.max(e.SWITCHBOARD_S3_RETRY_BASE_MS, e.SWITCHBOARD_S3_RETRY_MAX_MS),
  });
}

function tracingConfig(e: z.infer<typeof schema>): TracingConfig {
  const url = tracesUrl(e.OTEL_EXPORTER_OTLP_ENDPOINT, e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  return Object.freeze({
    enabled: url !== undefined && e.OTEL_SDK_DISABLED !== 'true',
    ...(url !== undefined && { tracesUrl: url }),
    // The traces-specific headers win over the general ones, as the OTLP exporter spec says.
    headers: Object.freeze({ ...parseKeyValueList(e.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyValueList(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS) }),
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: Object.freeze(parseKeyValueList(e.OTEL_RESOURCE_ATTRIBUTES)),
    sampler: e.OTEL_TRACES_SAMPLER as TracingConfig['sampler'],
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
    exportTimeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
  });
}
