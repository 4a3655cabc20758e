/**
 * The pipeline's CallRules core on the call clock (the same WakeTimer the pipeline engine uses),
 * with the assistant's speaking state aggregated over clips: two clips played back to back are
 * one stretch of speech, not a stop and a start.
 */
import type { Clock } from '../../util/clock.ts';
import type { CallRuleAction, CallRules, CallRulesStep } from '../rules.ts';
import { WakeTimer } from '../wake-timer.ts';

export class RulesClock {
  private readonly wake: WakeTimer<'rules'>;
  private readonly playing = new Set<string>();

  constructor(
    readonly rules: CallRules,
    clock: Clock,
    private readonly now: () => number,
    private readonly onActions: (actions: CallRuleAction[]) => void,
  ) {
    this.wake = new WakeTimer(clock, now, () => this.apply(this.rules.tick(this.now())));
  }

  apply(step: CallRulesStep): void {
    this.wake.set('rules', step.wakeAtMs);
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
    this.rules.end();
    this.wake.close();
  }
}
