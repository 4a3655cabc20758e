import type { CallControl, CollectDigitsOptions, CollectedDigits, TransferResult, TransferTarget, WarmTransferOptions, WarmTransferResult } from '../../../src/call/tools/control.ts';

/** Records every CallControl call in order; answers with scripted results. */
export class FakeControl implements CallControl {
  readonly log: { op: string; args: unknown[] }[] = [];
  blindResult: TransferResult = { ok: true, method: 'refer' };
  warmResult: WarmTransferResult = { outcome: 'accepted' };
  collected: CollectedDigits = { digits: '1234', endedBy: 'stop-key' };

  ops(): string[] {
    return this.log.map((l) => l.op);
  }

  async hangUp(afterSpeech: boolean) {
    this.log.push({ op: 'hangUp', args: [afterSpeech] });
  }
  async sendDtmf(digits: string) {
    this.log.push({ op: 'sendDtmf', args: [digits] });
  }
  async collectDigits(opts: CollectDigitsOptions, signal?: AbortSignal) {
    this.log.push({ op: 'collectDigits', args: [opts, signal] });
    return this.collected;
  }
  async transferBlind(target: TransferTarget) {
    this.log.push({ op: 'transferBlind', args: [target] });
    return this.blindResult;
  }
  async transferWarm(opts: WarmTransferOptions) {
    this.log.push({ op: 'transferWarm', args: [opts] });
    return this.warmResult;
  }
  async swapAssistant(id: number, opts: { speakGreeting: boolean; announced?: string }) {
    this.log.push({ op: 'swapAssistant', args: [id, opts] });
  }
  async say(text: string) {
    this.log.push({ op: 'say', args: [text] });
  }
}
