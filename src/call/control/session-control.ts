/**
 * CallControl on a live CallSession (src/call/tools/control.ts is the contract the voice tools
 * call). Decisions worth knowing (docs/CALLS.md, "Call tools, voicemail, campaigns"):
 * - end_call: hangUp(afterSpeech) returns at once. The engine hangs up itself once the goodbye
 *   has played (the tool is `ends: true`); as a safety net the call is hung up after the
 *   assistant has been quiet for `endCallIdleMs`.
 * - Blind transfer: REFER first (Refer-To: the number on the trunk's host, or the sip: URI). A
 *   final NOTIFY 2xx ends our leg at once. A refused REFER (405, 501, 603, 403, a timeout…) falls
 *   back to a bridge: a new leg through the call's own trunk, media relayed by the engine. Its
 *   caller ID is the customer's number passed through with Diversion when the trunk and the
 *   number allow it, else the trunk's own number (caller-id.ts has the rule and the fallback);
 *   the record keeps which. A REFER the far end accepted but could not complete
 *   (NOTIFY ≥ 300) is reported as failed, not retried as a bridge: the target itself is the problem.
 * - Keypad digits are never written to the record (they may be a PIN): only how many and how
 *   collection ended.
 */
import type { CallControl, CollectDigitsOptions, CollectedDigits, TransferResult, TransferTarget, WarmTransferOptions, WarmTransferResult } from '../tools/control.ts';
import { KeypadCollector } from '../tools/keypad.ts';
import { Bridge } from './bridge.ts';
import type { Conductor } from './conductor.ts';
import { transferCallerId, type CallerId } from './caller-id.ts';
import { dialWithCallerId } from './leg.ts';
import { referTarget, sendRefer } from './refer.ts';
import { warmTransfer } from './warm-transfer.ts';

const POLL_MS = 100;
/** Longest wait for the engine's queued audio before the control speaks over it. */
const MAX_WAIT_IDLE_MS = 3_000;

export class SessionControl implements CallControl {
  private endWatch: { cancel(): void } | undefined;

  constructor(private readonly c: Conductor) {}

  private get clock() {
    return this.c.deps.env.clock;
  }

  async hangUp(afterSpeech: boolean): Promise<void> {
    if (!afterSpeech) {
      void this.c.hangUpNow('local-hangup');
      return;
    }
    if (this.endWatch) return;
    const out = this.c.session.outbound;
    let quietSince = this.clock.now();
    const tick = (): void => {
      if (!this.c.active) return;
      if (out.playing) quietSince = this.clock.now();
      if (this.clock.now() - quietSince >= this.c.o.endCallIdleMs) {
        void this.c.hangUpNow('local-hangup');
        return;
      }
      timer = this.clock.setTimeout(tick, POLL_MS);
    };
    let timer = this.clock.setTimeout(tick, POLL_MS);
    this.endWatch = { cancel: () => timer.cancel() };
    void this.c.session.done.then(() => timer.cancel());
  }

  async sendDtmf(digits: string): Promise<void> {
    await this.c.session.sendDtmf(digits);
    await this.c.details.push('dtmf_sent', { digits, at: this.clock.now() });
  }

  async collectDigits(opts: CollectDigitsOptions, signal?: AbortSignal): Promise<CollectedDigits> {
    const collector = new KeypadCollector(opts, this.clock, signal);
    const onDtmf = (e: { digit: string }): void => collector.press(e.digit);
    const session = this.c.session;
    session.on('dtmf', onDtmf);
    const onEnd = (): void => collector.cancel();
    void session.done.then(onEnd);
    try {
      const got = await collector.result;
      await this.c.details.push('keypad', { digits: got.digits.length, ended_by: got.endedBy, at: this.clock.now() });
      return got;
    } finally {
      session.off('dtmf', onDtmf);
    }
  }

  async say(text: string): Promise<void> {
    const view = this.c.view;
    await this.waitQuiet();
    view?.mute(true);
    try {
      await this.play(text);
    } finally {
      // Still muted if a bridge or hold took over meanwhile.
      if (!this.c.bridge && !this.c.swap) view?.mute(false);
    }
  }

  /** Speaks `text` straight to the caller (the engine must already be muted). */
  async play(text: string, signal?: AbortSignal): Promise<void> {
    const ac = new AbortController();
    const stop = (): void => ac.abort();
    signal?.addEventListener('abort', stop, { once: true });
    void this.c.session.done.then(stop);
    try {
      await this.c.session.outbound.writeStream(this.c.speech(text, ac.signal), ac.signal);
    } catch (err) {
      this.c.deps.env.logger.warn({ call: this.c.session.uuid, err: (err as Error).message }, 'could not speak a fixed text');
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  /** Lets queued engine audio (the sentence before a tool call) finish first. */
  async waitQuiet(): Promise<void> {
    const start = this.clock.now();
    while (this.c.session.outbound.playing && this.c.active && this.clock.now() - start < MAX_WAIT_IDLE_MS) {
      await new Promise<void>((r) => this.clock.setTimeout(r, POLL_MS));
    }
  }

  async transferBlind(target: TransferTarget): Promise<TransferResult> {
    const c = this.c;
    const dialog = c.session.sipDialog;
    if (!dialog || !c.active) return { ok: false, reason: 'failed', detail: 'the call is not connected' };
    const base = { type: 'blind', target: target.target, reason: target.reason ?? null, started_at: this.clock.now() };
    const host = (c.trunk?.spec.address ?? '').replace(/:\d+$/, '');
    const refer = await sendRefer(dialog, referTarget(target.target, host || 'invalid'), {
      clock: this.clock,
      notifyTimeoutMs: c.o.referNotifyMs,
    });
    if (refer.ok) {
      await c.details.set({ transfer: { ...base, method: 'refer', refer_status: refer.referStatus, notify_status: refer.notifyStatus } });
      c.session.log.info({ type: 'blind', method: 'refer', target: target.target }, 'call transferred');
      // The far end has connected the caller elsewhere: our leg is done. After this turn, not in it.
      this.clock.setTimeout(() => void c.hangUpNow('local-hangup'), 0);
      return { ok: true, method: 'refer' };
    }
    if (refer.stage === 'notify') {
      await c.details.set({ transfer: { ...base, method: 'refer', refer_status: refer.referStatus, notify_status: refer.notifyStatus, failed: true } });
      const busy = refer.notifyStatus === 486 || refer.notifyStatus === 600;
      return { ok: false, reason: busy ? 'busy' : refer.notifyStatus === null ? 'no-answer' : 'failed', detail: `NOTIFY ${refer.notifyStatus ?? 'none'}` };
    }
    if (!c.trunk) return { ok: false, reason: 'failed', detail: `REFER refused (${refer.referStatus}) and no trunk to bridge through` };
    const dialed = await dialWithCallerId(
      { ua: c.deps.ua, clock: this.clock, createMedia: c.deps.env.createMedia },
      { trunk: c.trunk, to: target.target, ringingMs: c.o.legRingingMs, callerId: transferCallerId(c.trunk.spec, c.callerNumber) },
    );
    const callerId = callerIdRecord(dialed.callerId, dialed.passthroughRefused);
    if (!dialed.ok) {
      await c.details.set({ transfer: { ...base, method: 'bridge', refer_status: refer.referStatus, failed: true, leg_status: dialed.status, caller_id: callerId } });
      return { ok: false, reason: dialed.reason, detail: `bridge leg: ${dialed.status}${dialed.cause ? ` ${dialed.cause}` : ''}` };
    }
    if (!c.active) {
      await dialed.leg.hangup();
      return { ok: false, reason: 'failed', detail: 'the caller left' };
    }
    const bridge = new Bridge(dialed.leg, c.sw, c.session.outbound);
    c.bridge = bridge;
    c.view?.mute(true);
    c.beginHandover();
    this.recordLegs({ ...base, caller_id: callerId }, refer.referStatus, bridge);
    c.session.log.info({ type: 'blind', method: 'bridge', target: target.target }, 'call transferred');
    return { ok: true, method: 'bridge' };
  }

  /** The call record lists both legs; the far leg's end is added when it ends. */
  recordLegs(base: Record<string, unknown>, referStatus: number | null, bridge: Bridge): void {
    const c = this.c;
    const legs = (ended?: { at: number; why: string }) => [
      { leg: 'caller', call_id: c.session.sipDialog?.callId ?? null, number: c.callerNumber },
      {
        leg: 'target',
        call_id: bridge.leg.callId,
        target: bridge.leg.target,
        answered_at: bridge.leg.answeredAt,
        ...(ended ? { ended_at: ended.at, end_cause: ended.why, relayed_frames: { to_target: bridge.relayedToFar, to_caller: bridge.relayedToCaller } } : {}),
      },
    ];
    const transfer = (ended?: { at: number; why: string }) => ({ ...base, method: 'bridge', refer_status: referStatus, legs: legs(ended) });
    void c.details.set({ transfer: transfer() });
    void bridge.done.then((why) => c.details.set({ transfer: transfer({ at: this.clock.now(), why }) }));
  }

  transferWarm(opts: WarmTransferOptions): Promise<WarmTransferResult> {
    return warmTransfer(this.c, this, opts);
  }

  async swapAssistant(assistantId: number, opts: { speakGreeting: boolean; announced?: string }): Promise<void> {
    const c = this.c;
    const target = await c.deps.env.repos.assistants.getById(assistantId);
    if (!target || target.accountId !== c.session.accountId) throw new Error(`assistant ${assistantId} is not available`);
    await c.details.push('assistant_swaps', { from: c.assistant.id, to: target.id, greeting: opts.speakGreeting, at: this.clock.now() });
    c.swap = { assistant: target, speakGreeting: opts.speakGreeting, ...(opts.announced ? { announced: opts.announced } : {}) };
    c.beginHandover();
  }
}

/** The caller ID of a second leg as the call record shows it. */
export function callerIdRecord(id: CallerId, passthroughRefused?: number): Record<string, unknown> {
  return {
    kind: id.kind,
    number: id.number,
    ...(id.diversion ? { diversion: id.diversion } : {}),
    ...(passthroughRefused !== undefined ? { passthrough_refused: passthroughRefused } : {}),
  };
}
