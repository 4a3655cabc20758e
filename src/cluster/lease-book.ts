/**
 * Live-call slots held by nodes, as a pure core on the caller's clock: a node's slots count while
 * its last beat is at most `leaseMs` old; past that the node is taken for dead and its slots are
 * dropped (a crashed node cannot hold an account's cap forever). The Redis implementation keeps
 * the same rule with key TTLs (src/cluster/redis/call-leases.ts).
 */
import type { CallCaps, CapRefusal } from './types.ts';

interface NodeLeases {
  beatAtMs: number;
  leases: Map<string, { accountId: number; trunkKey: string }>;
}

export class LeaseBook {
  private readonly nodes = new Map<string, NodeLeases>();

  constructor(private readonly leaseMs: number) {}

  /** The node is alive at `nowMs`. */
  beat(nodeId: string, nowMs: number): void {
    this.node(nodeId, nowMs).beatAtMs = nowMs;
  }

  /** `nodeId` is alive by acting; dead nodes' slots are dropped before counting. */
  acquire(nodeId: string, leaseId: string, accountId: number, trunkKey: string, caps: CallCaps, nowMs: number): 'ok' | CapRefusal {
    const self = this.node(nodeId, nowMs);
    self.beatAtMs = nowMs;
    const { account, trunk } = this.counts(accountId, trunkKey, nowMs, nodeId);
    if (account >= caps.maxPerAccount) return 'account';
    if (trunk >= caps.maxPerTrunk) return 'trunk';
    self.leases.set(leaseId, { accountId, trunkKey });
    return 'ok';
  }

  release(nodeId: string, leaseId: string): void {
    this.nodes.get(nodeId)?.leases.delete(leaseId);
  }

  /** `self`: the asking node, alive whatever its last beat (it is asking). */
  counts(accountId: number, trunkKey: string, nowMs: number, self?: string): { account: number; trunk: number } {
    let account = 0;
    let trunk = 0;
    for (const [id, node] of this.nodes) {
      if (id !== self && !this.alive(node, nowMs)) {
        this.nodes.delete(id);
        continue;
      }
      for (const l of node.leases.values()) {
        if (l.accountId === accountId) account++;
        if (l.trunkKey === trunkKey) trunk++;
      }
    }
    return { account, trunk };
  }

  /** Whether `nodeId` counts at `nowMs`. */
  isAlive(nodeId: string, nowMs: number): boolean {
    const node = this.nodes.get(nodeId);
    return node !== undefined && this.alive(node, nowMs);
  }

  private alive(node: NodeLeases, nowMs: number): boolean {
    return nowMs - node.beatAtMs <= this.leaseMs;
  }

  private node(nodeId: string, nowMs: number): NodeLeases {
    let node = this.nodes.get(nodeId);
    if (!node) {
      node = { beatAtMs: nowMs, leases: new Map() };
      this.nodes.set(nodeId, node);
    }
    return node;
  }
}
