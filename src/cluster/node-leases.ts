/**
 * The named leases of one engine node (docs/WORK-ONCE.md): `sweeper` (stale calls, post-call
 * sweep, conversation inactivity) and `registrar` (REGISTER of `auth` trunks to carriers). Each
 * is held by one node at a time and moves to another when its holder stops or dies. Besides,
 * `node:<id>` says this node is alive (the campaign dialer splits a campaign's cap by the count).
 */
import type { LeasesRepo } from '../store/repos/leases.ts';
import type { Clock } from '../util/clock.ts';
import { NamedLease } from './named-lease.ts';

export const LEASE_NAMES = Object.freeze({ sweeper: 'sweeper', registrar: 'registrar' });
/** `node:<id>`: each node's presence, always its own; the count of live ones splits campaign caps. */
export const NODE_LEASE_PREFIX = 'node:';

export interface NodeLeases {
  sweeper: NamedLease;
  registrar: NamedLease;
  presence: NamedLease;
  /** Tries to take both once (so the first sweep and registrations know), then keeps them. */
  start(): Promise<void>;
  /** Gives both up (another node takes over at its next try). */
  stop(): Promise<void>;
}

export function nodeLeases(o: {
  leases: Pick<LeasesRepo, 'take' | 'release'>;
  nodeId: string;
  ttlMs: number;
  clock: Clock;
  logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  /** Called when this node gains or loses the registrar lease. */
  onRegistrarChange?: (held: boolean) => void;
}): NodeLeases {
  const make = (name: string, onChange?: (held: boolean) => void): NamedLease =>
    new NamedLease({ leases: o.leases, name, holder: o.nodeId, clock: o.clock, timing: { ttlMs: o.ttlMs }, logger: o.logger, ...(onChange ? { onChange } : {}) });
  const sweeper = make(LEASE_NAMES.sweeper);
  const registrar = make(LEASE_NAMES.registrar, (held) => o.onRegistrarChange?.(held));
  const presence = make(`${NODE_LEASE_PREFIX}${o.nodeId}`);
  return {
    sweeper,
    registrar,
    presence,
    async start() {
      await Promise.all([presence.start(), sweeper.start(), registrar.start()]);
    },
    async stop() {
      await Promise.all([sweeper.stop(), registrar.stop(), presence.stop()]);
    },
  };
}
