/**
 * SIP trunks across nodes sharing one store: each node keeps its trunks in memory (the SIP layer
 * matches every INVITE against them), provisioned at start from the store. A trunk created or
 * deleted through another node's API reaches this node by this sync, which reads the store every
 * `intervalMs` and reconciles: stored trunks this node lacks are provisioned; trunks this node
 * has that the store no longer holds are removed once they are missing from two reads in a row
 * (a trunk being created through this node's own API is provisioned a moment before its row is
 * saved, and must not be taken for a deleted one).
 */
import type { Logger } from 'pino';
import type { StoredTrunkSource, TrunkRegistry } from '../sip/trunk-registry.ts';

export class TrunkSync {
  /** Inbound ids missing from the store at the last read. */
  private missing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly source: StoredTrunkSource,
    private readonly registry: TrunkRegistry,
    private readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>,
    private readonly intervalMs = 5_000,
  ) {}

  /** One reconciliation; returns what changed. */
  async syncOnce(): Promise<{ added: number; removed: number }> {
    const stored = await this.source.allForProvisioning();
    const storedIds = new Set(stored.map((s) => s.ids.inboundTrunkId));
    const known = new Set(this.registry.list().map((t) => t.inboundTrunkId));
    let added = 0;
    for (const s of stored) {
      if (known.has(s.ids.inboundTrunkId)) continue;
      try {
        await this.registry.provision(s.spec(), s.ids);
        added++;
      } catch (err) {
        this.logger.error({ sipTrunkId: s.sipTrunkId, err: (err as Error).message }, 'could not provision a SIP trunk another node created');
      }
    }
    let removed = 0;
    const missingNow = new Set<string>();
    for (const t of this.registry.list()) {
      if (storedIds.has(t.inboundTrunkId)) continue;
      if (this.missing.has(t.inboundTrunkId)) {
        await this.registry.deprovision(t);
        removed++;
      } else {
        missingNow.add(t.inboundTrunkId);
      }
    }
    this.missing = missingNow;
    if (added || removed) this.logger.info({ added, removed }, 'SIP trunks synced from the shared store');
    return { added, removed };
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.syncOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'SIP trunk sync failed; retrying'))
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
