/**
 * Keeps every `auth` trunk registered with its provider (the trunk's sip_address) using the
 * trunk's digest credentials: refreshed before expiry (Registration does that), retried with
 * exponential backoff after a failure, dropped (Expires: 0) when the trunk is deprovisioned.
 *
 * The Contact we register carries the trunk's inbound id as its user part
 * (`sip:ST_in_…@public-host:port`), so a call the provider sends on this registration names its
 * trunk in the Request-URI even when the provider puts something else in To.
 *
 * Trunks come and go through REST at any time and the registry has no events: `sync()` runs on a
 * short interval and on demand.
 */
import type { Logger } from 'pino';
import type { Clock, Timer } from '../util/clock.ts';
import { trunkUri, uriHost, uriHostWithoutPort, type ProvisionedTrunk, type TrunkRegistry } from './trunk-registry.ts';
import { digestCredentials } from './user-agent-auth.ts';
import { ipKey } from '../util/ip.ts';
import type { UserAgent } from './user-agent.ts';
import type { Registration } from './user-agent-register.ts';

export type RegistrationState = 'registering' | 'registered' | 'failed';

export interface RegistrationStatus {
  inboundTrunkId: string;
  sipTrunkId: number | null;
  registrar: string;
  state: RegistrationState;
  lastStatus: number | undefined;
  expiresSec: number;
  failures: number;
}

export interface RegistrationManagerOptions {
  ua: UserAgent;
  trunks: TrunkRegistry;
  clock: Clock;
  logger: Logger;
  /** Expiry we ask for (the registrar may grant less). Default 600 s. */
  expiresSec?: number;
  syncIntervalMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  /**
   * Several nodes (docs/WORK-ONCE.md): registrations are made only while this node holds the
   * registrar lease; absent, always (a single node). Call sync() when it changes.
   */
  leader?: { readonly held: boolean };
}

interface Entry {
  trunk: ProvisionedTrunk;
  /** Address and credentials registered with, to notice a change. */
  key: string;
  registration: Registration;
  status: RegistrationStatus;
  /** The registrar's addresses (as ipKey spells them): INVITEs from these are calls on our registration. */
  ips: Set<string>;
  retry: Timer | undefined;
}

export class RegistrationManager {
  private readonly entries = new Map<string, Entry>();
  private syncTimer: Timer | undefined;
  private closed = false;

  constructor(private readonly o: RegistrationManagerOptions) {}

  start(): void {
    this.sync();
    this.scheduleSync();
  }

  private scheduleSync(): void {
    if (this.closed) return;
    this.syncTimer = this.o.clock.setTimeout(() => {
      this.sync();
      this.scheduleSync();
    }, this.o.syncIntervalMs ?? 5000);
  }

  /** Starts registrations for new auth trunks and removes those of deprovisioned ones. */
  sync(): void {
    if (this.closed) return;
    const lead = this.o.leader?.held ?? true;
    const wanted = new Map(lead ? this.o.trunks.list().filter((t) => t.spec.authType === 'auth').map((t) => [t.inboundTrunkId, t]) : []);
    for (const [id, entry] of this.entries) {
      const now = wanted.get(id);
      // Credentials or address changed: register afresh.
      if (!now || keyOf(now) !== entry.key) void this.drop(entry, true);
    }
    for (const [id, trunk] of wanted) if (!this.entries.has(id)) this.add(trunk);
  }

  /** Inbound ids of the trunks whose registrar is `ip`. */
  trusting(ip: string): string[] {
    const key = ipKey(ip);
    const out: string[] = [];
    for (const [id, e] of this.entries) if (e.ips.has(key)) out.push(id);
    return out;
  }

  isRegistrar(ip: string): boolean {
    const key = ipKey(ip);
    for (const e of this.entries.values()) if (e.ips.has(key)) return true;
    return false;
  }

  list(): RegistrationStatus[] {
    return [...this.entries.values()].map((e) => ({ ...e.status }));
  }

  private add(trunk: ProvisionedTrunk): void {
    const spec = trunk.spec;
    const registrar = trunkUri(spec);
    // Our Contact, with the trunk id as user (see the header comment).
    const ua = this.o.ua;
    const scoped = Object.create(ua) as UserAgent;
    scoped.contactFor = (t, scheme, peer) => ua.contactFor(t, scheme, peer).replace(/^<(sips?):[^@]*@/, `<$1:${trunk.inboundTrunkId}@`);
    const { registration, result } = scoped.register({
      registrar,
      aor: `sip:${spec.username}@${uriHostWithoutPort(spec.address)}`,
      expiresSec: this.o.expiresSec ?? 600,
      credentials: digestCredentials(spec.username, spec.password),
    });
    const entry: Entry = {
      trunk,
      key: keyOf(trunk),
      registration,
      ips: new Set(),
      retry: undefined,
      status: { inboundTrunkId: trunk.inboundTrunkId, sipTrunkId: spec.id, registrar, state: 'registering', lastStatus: undefined, expiresSec: 0, failures: 0 },
    };
    this.entries.set(trunk.inboundTrunkId, entry);
    const log = this.o.logger.child({ sipTrunkId: spec.id, registrar });
    registration.on('registered', (expiresSec) => {
      entry.status = { ...entry.status, state: 'registered', lastStatus: 200, expiresSec, failures: 0 };
      log.info({ expiresSec }, 'SIP trunk registered');
    });
    registration.on('failed', (status, reason) => {
      entry.status = { ...entry.status, state: 'failed', lastStatus: status, expiresSec: 0, failures: entry.status.failures + 1 };
      const delay = this.backoff(entry.status.failures);
      log.warn({ status, reason, retryInMs: delay }, 'SIP trunk registration failed');
      entry.retry?.cancel();
      entry.retry = this.o.clock.setTimeout(() => {
        entry.retry = undefined;
        if (this.entries.get(trunk.inboundTrunkId) === entry) void this.kick(entry);
      }, delay);
    });
    result.catch(() => registration.emit('failed', 503, 'could not send REGISTER'));
    void this.resolveRegistrar(spec.address).then((ips) => {
      for (const ip of ips) entry.ips.add(ipKey(ip));
    });
  }

  /** The first REGISTER is sent by register() itself; this is for retries. */
  private async kick(entry: Entry): Promise<void> {
    entry.status.state = 'registering';
    await entry.registration.register().catch(() => entry.registration.emit('failed', 503, 'send failed'));
  }

  private backoff(failures: number): number {
    const min = this.o.retryMinMs ?? 2000;
    const max = this.o.retryMaxMs ?? 300_000;
    const base = Math.min(max, min * 2 ** Math.min(failures - 1, 16));
    // ±20 % so a fleet restarted together does not hammer the registrar in step.
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** Every address the registrar's domain leads to (RFC 3263): calls may come from any of them. */
  private async resolveRegistrar(address: string): Promise<string[]> {
    try {
      return [...new Set((await this.o.ua.locateUri(`sip:${uriHost(address)}`)).map((d) => d.address))];
    } catch {
      return [];
    }
  }

  private drop(entry: Entry, unregister: boolean): Promise<void> {
    this.entries.delete(entry.trunk.inboundTrunkId);
    entry.retry?.cancel();
    const reg = entry.registration;
    // No retries for a registration we are dropping.
    reg.removeAllListeners();
    const done = unregister && reg.grantedSec > 0 ? reg.unregister().then(() => undefined, () => undefined) : Promise.resolve();
    return done.finally(() => reg.close());
  }

  /** Unregisters everything (bounded by `graceMs`) and stops. */
  async close(graceMs = 1000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.syncTimer?.cancel();
    const all = [...this.entries.values()].map((e) => this.drop(e, true));
    let timer: Timer | undefined;
    await Promise.race([Promise.all(all), new Promise<void>((r) => (timer = this.o.clock.setTimeout(r, graceMs)))]);
    timer?.cancel();
    for (const e of [...this.entries.values()]) e.registration.close();
  }
}

function keyOf(t: ProvisionedTrunk): string {
  return JSON.stringify([t.spec.address, t.spec.username, t.spec.password]);
}
