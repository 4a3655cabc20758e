/**
 * The receiver's estimate of a packet's 48-bit index from its 16-bit sequence number (RFC 3711
 * §3.3.1 and Appendix A): the rollover counter (ROC) and the highest sequence number seen, s_l.
 * `estimate` is pure; `commit` moves the state once the packet authenticated.
 */
export class PacketIndexEstimator {
  private roc = 0;
  private sl = 0;
  private started = false;

  /** The packet's index: ROC guess * 65536 + seq. */
  estimate(seq: number): number {
    if (!this.started) return seq;
    let v = this.roc;
    if (this.sl < 32768) {
      if (seq - this.sl > 32768) v = this.roc - 1;
    } else if (this.sl - 32768 > seq) {
      v = this.roc + 1;
    }
    // Before the first rollover a "previous ROC" does not exist: such a packet is from before
    // our first one and far out of the replay window; index it low so the window refuses it.
    if (v < 0) return -1;
    return v * 65536 + seq;
  }

  commit(index: number): void {
    const v = Math.floor(index / 65536);
    const seq = index - v * 65536;
    if (!this.started) {
      this.started = true;
      this.roc = v;
      this.sl = seq;
      return;
    }
    if (v > this.roc) {
      this.roc = v;
      this.sl = seq;
    } else if (v === this.roc && seq > this.sl) {
      this.sl = seq;
    }
  }
}
