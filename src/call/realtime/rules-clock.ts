/**
 * The pipeline's CallRules core on the call clock: one timer armed for the core's `wakeAtMs`, and
 * the assistant's speaking state aggregated over clips (two clips played back to back are one
 * stretch of speech, not a stop and a start).
 */
import type { Clock, Timer } from '../../util/clock.ts';
import type { CallRuleAction, CallRules, CallRulesStep } from '../rules.ts';

export class RulesClock {
  private timer: Timer | undefined;
  private readonly playing = new Set<string>();
  private closed = false;

  constructor(
    readonly rules: CallRules,
    private readonly clock: Clock,
    private readonly now: () => number,
    private readonly onActions: (actions: CallRuleAction[]) => void,
  ) {}

  apply(step: CallRulesStep): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (step.wakeAtMs !== undefined && !this.closed) {
      this.timer = this.clock.setTimeout(() => this.apply(this.rules.tick(this.now())), Math.max(0, step.wakeAtMs - this.now()));
    }
    if (step.actions.length > 0) this.onActions(step.actions);
  }

  audioStart(key: string, atMs: number): void {
    this.playing.add(key);
    if (this.playing.size === 1) this.apply(this.rules.assistantAudioStart(atMs));
  }

  audioEnd(key: string, atMs: number): void {
    this.playing.delete(key);
    if (this.playing.size === 0) this.apply(this.rules.assistantAudioEnd(atMs));
  }

  close(): void {
    this.closed = true;
    this.rules.end();
    this.timer?.cancel();
  }
}
