/**
 * When the RTP I/O thread (./worker.ts) should wake next with nothing queued: the media clock's
 * grid as the thread sees it in the packets it sends. Pure: the worker gives it the due times
 * and the time.
 *
 * The media clock (../media-clock.ts) runs its passes on GRID_PHASES phases, GRID_PHASE_MS apart;
 * a session hands its packet over at its phase's pass, due at the next phase's time. A slot of
 * the grid is worth a wake-up when its phase had packets one grid period before (they will be
 * due again then: every slot under load, a lone call's own phase) and, when the thread sweeps
 * native sockets, the slot before such a one (the pass that plays those calls' inbound audio runs
 * then: a sweep just before it finds what came). A phase that had none for a period is forgotten.
 */
import { GRID_PHASE_MS, GRID_PHASES } from './protocol.ts';

export class SendGrid {
  /** The due time of the last packet sent, and its slot. */
  private lastDue = -Infinity;
  private lastSlot = 0;
  /** Per phase, the last slot that had packets due. */
  private readonly phaseSlots = new Array<number>(GRID_PHASES).fill(-Infinity);

  /** Packets due at `due` are being sent. */
  sent(due: number): void {
    if (due === this.lastDue) return;
    this.lastDue = due;
    this.lastSlot = Math.round(due / GRID_PHASE_MS);
    this.phaseSlots[mod(this.lastSlot, GRID_PHASES)] = this.lastSlot;
  }

  /**
   * The due time of the next slot after `t` worth a wake-up (`sweeps`: also the slots before
   * those with packets); Infinity when there is none (no phase had packets a period ago).
   */
  next(t: number, sweeps: boolean): number {
    for (let j = 1; j <= GRID_PHASES; j++) {
      const slot = this.lastSlot + j;
      if (!this.hadPackets(slot) && !(sweeps && this.hadPackets(slot + 1))) continue;
      const at = this.lastDue + j * GRID_PHASE_MS;
      if (at > t) return at;
    }
    return Infinity;
  }

  /** The slot a grid period before `slot` had packets due. */
  private hadPackets(slot: number): boolean {
    return this.phaseSlots[mod(slot, GRID_PHASES)] === slot - GRID_PHASES;
  }
}

function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}
