/**
 * Keypad collection, pure on a clock: keys come in through `press`, time through the Clock's
 * timers. Collection ends at the stop key, after `timeoutMs` without a key (the wait for the first
 * key counts too: a caller who never presses anything must not hold the call), at `maxDigits`, or
 * on abort. The session's CallControl.collectDigits feeds it its DTMF events.
 */
import type { Clock, Timer } from '../../util/clock.ts';
import type { CollectDigitsOptions, CollectedDigits } from './control.ts';

const KEYS = /^[0-9*#A-D]$/;

export class KeypadCollector {
  readonly result: Promise<CollectedDigits>;
  private digits = '';
  private timer: Timer | undefined;
  private resolve!: (r: CollectedDigits) => void;
  private finished = false;
  private readonly onAbort = () => this.finish('aborted');

  constructor(
    private readonly opts: CollectDigitsOptions,
    private readonly clock: Clock,
    private readonly signal?: AbortSignal,
  ) {
    this.result = new Promise((resolve) => (this.resolve = resolve));
    if (signal?.aborted) {
      this.finish('aborted');
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.arm();
  }

  get done(): boolean {
    return this.finished;
  }

  /** One key as decoded from RFC 4733 or in-band DTMF; other characters are ignored. */
  press(key: string): void {
    if (this.finished) return;
    const k = key.toUpperCase();
    if (!KEYS.test(k)) return;
    if (k === this.opts.stopKey) {
      this.finish('stop-key');
      return;
    }
    this.digits += k;
    if (this.opts.maxDigits !== undefined && this.digits.length >= this.opts.maxDigits) {
      this.finish('max-digits');
      return;
    }
    this.arm();
  }

  /** Ends collection now (the call ended); keeps what was pressed. */
  cancel(): void {
    this.finish('aborted');
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = this.clock.setTimeout(() => this.finish('timeout'), this.opts.timeoutMs);
  }

  private finish(endedBy: CollectedDigits['endedBy']): void {
    if (this.finished) return;
    this.finished = true;
    this.timer?.cancel();
    this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve({ digits: this.digits, endedBy });
  }
}
