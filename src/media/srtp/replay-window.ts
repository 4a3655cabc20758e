/**
 * The receiver's replay list (RFC 3711 §3.3.2): the highest index accepted and a 64-packet
 * bitmap below it, in two 32-bit words so that nothing is allocated per packet (no BigInt).
 * `check` before authenticating, `accept` only once the packet authenticated, so a forged
 * packet cannot move the window.
 */
export const REPLAY_WINDOW_SIZE = 64;

export type ReplayVerdict = 'ok' | 'replayed' | 'too-old';

export class ReplayWindow {
  /** Highest accepted index; -1 before the first. */
  private top = -1;
  /** Bit i: index top - i was accepted (bit 0 is `top` itself). */
  private lo = 0;
  private hi = 0;

  get highest(): number {
    return this.top;
  }

  check(index: number): ReplayVerdict {
    if (this.top < 0 || index > this.top) return 'ok';
    const delta = this.top - index;
    if (delta >= REPLAY_WINDOW_SIZE) return 'too-old';
    const bit = delta < 32 ? (this.lo >>> delta) & 1 : (this.hi >>> (delta - 32)) & 1;
    return bit === 1 ? 'replayed' : 'ok';
  }

  accept(index: number): void {
    if (this.top < 0) {
      this.top = index;
      this.lo = 1;
      this.hi = 0;
      return;
    }
    if (index > this.top) {
      this.shift(index - this.top);
      this.top = index;
      this.lo = (this.lo | 1) >>> 0;
      return;
    }
    const delta = this.top - index;
    if (delta >= REPLAY_WINDOW_SIZE) return;
    if (delta < 32) this.lo = (this.lo | (1 << delta)) >>> 0;
    else this.hi = (this.hi | (1 << (delta - 32))) >>> 0;
  }

  private shift(n: number): void {
    if (n >= 64) {
      this.hi = 0;
      this.lo = 0;
    } else if (n >= 32) {
      this.hi = n === 32 ? this.lo : (this.lo << (n - 32)) >>> 0;
      this.lo = 0;
    } else {
      this.hi = ((this.hi << n) | (this.lo >>> (32 - n))) >>> 0;
      this.lo = (this.lo << n) >>> 0;
    }
  }
}
