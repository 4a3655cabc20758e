import type { Logger } from 'pino';
import type { ConversationsRepo } from '../store/repos/conversations.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { ConversationService } from './conversation-service.ts';

export interface SweeperDeps {
  conversations: ConversationsRepo;
  service: ConversationService;
  assistant(id: number): Promise<AssistantRecord | undefined>;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  /** False while another node holds the sweep lease (docs/WORK-ONCE.md): the timer's passes are skipped. */
  active?: () => boolean;
  /**
   * Several nodes sweeping one store: true for the one node that ends a given conversation
   * (src/cluster claim); absent, this process is the only sweeper.
   */
  claim?(key: string, ttlMs: number): Promise<boolean>;
}

/** How long a node's claim on ending a conversation keeps the others off it. */
export const END_CLAIM_MS = 60_000;

/**
 * Ends conversations whose inactivity deadline (stored with every message) has passed. The timer
 * only decides how often to look; the truth is in the table, so a restart loses nothing and a
 * conversation that was due while the engine was down ends on the first sweep.
 */
export class InactivitySweeper {
  private timer: Timer | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly deps: SweeperDeps) {}

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.timer = this.deps.clock.setTimeout(() => {
        void (this.deps.active?.() === false ? Promise.resolve(0) : this.sweep())
          .catch((err: unknown) => this.deps.logger.error({ err }, 'inactivity sweep failed'))
          .finally(() => {
            if (this.timer) tick();
          });
      }, this.deps.intervalMs ?? 15_000);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    await this.running?.catch(() => 0);
  }

  /** Ends every due conversation; returns how many this pass ended. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * One conversation that cannot be ended (its event cannot be written, say) is logged and left
   * for the next sweep; it does not hold up the others.
   */
  private async pass(): Promise<number> {
    const batch = 100;
    let ended = 0;
    // Failed here, or being ended by another node: not asked for again in this pass.
    const failed = new Set<number>();
    for (;;) {
      const due = (await this.deps.conversations.dueForEnd(this.deps.clock.now(), batch + failed.size)).filter((c) => !failed.has(c.id));
      if (due.length === 0) return ended;
      for (const conv of due) {
        if (this.deps.claim && !(await this.deps.claim(`inactivity:${conv.id}`, END_CLAIM_MS).catch(() => true))) {
          failed.add(conv.id);
          continue;
        }
        try {
          if (await this.deps.service.end(conv, await this.deps.assistant(conv.assistantId), 'inactivity')) ended++;
        } catch (err) {
          failed.add(conv.id);
          this.deps.logger.error({ err, conversationId: conv.id }, 'could not end an inactive conversation');
        }
      }
    }
  }
}
