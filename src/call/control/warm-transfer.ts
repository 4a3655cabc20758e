/**
 * warm_call_transfer: the caller waits on hold while a supervisor is dialled and briefed.
 *
 * 1. The engine is muted and the caller's audio goes nowhere (so a caller talking on hold does
 *    not start a turn); the caller hears `hold_message`, then hold music at `hold_music_volume`
 *    (hold-music.ts) or silence with `hold_music: none`.
 * 2. The supervisor is dialled through the trunk of `outbound_phone_id` (`custom_sip`: the
 *    address as is, or an extension on that trunk's host) with From per `caller_id_mode`.
 * 3. Once they answer they hear `briefing_initial_message`, the AI summary (written per
 *    `summary_instructions` from the model's summary and reason), and the question
 *    "Press 1 to take the call, or 2 to decline." Acceptance is DTMF 1, chosen over speech
 *    because it needs no STT on the supervisor leg and cannot be triggered by the briefing
 *    itself. 2, hanging up, or `supervisorAcceptMs` of nothing is a refusal.
 * 4. Accepted: hold music stops, the caller hears `connected_message`, the legs are bridged.
 *    Otherwise the supervisor leg is hung up, the caller's audio goes back to the engine and the
 *    tool tells the model, which apologises and carries on.
 */
import type { WarmTransferOptions, WarmTransferResult } from '../tools/control.ts';
import { Bridge } from './bridge.ts';
import type { Conductor } from './conductor.ts';
import { holdMusicFrames } from './hold-music.ts';
import { dialLeg, type Leg } from './leg.ts';
import type { SessionControl } from './session-control.ts';

export const ACCEPT_PROMPT = 'Press 1 to take the call, or 2 to decline.';
const SUMMARY_TIMEOUT_MS = 8_000;

export async function warmTransfer(c: Conductor, control: SessionControl, opts: WarmTransferOptions): Promise<WarmTransferResult> {
  const { env } = c.deps;
  const clock = env.clock;
  const trunk = await trunkForPhone(c, opts.outboundPhoneId);
  if (!trunk) return { outcome: 'failed', detail: `phone number ${opts.outboundPhoneId} has no live trunk` };
  const base = { type: 'warm', supervisor: opts.supervisor, reason: opts.reason, started_at: clock.now() };
  const from =
    opts.callerIdMode === 'customer_number' ? (c.callerNumber ?? trunk.spec.phoneNumber) : opts.callerIdMode === 'custom' ? (opts.customCallerId ?? trunk.spec.phoneNumber) : trunk.spec.phoneNumber;
  const to = opts.customSip && !/^sips?:/i.test(opts.supervisor) ? `sip:${opts.supervisor}@${trunk.spec.address}` : opts.supervisor;

  const view = c.view;
  const hold = new AbortController();
  void c.session.done.then(() => hold.abort());
  const held = (async () => {
    // Let the model's sentence before the tool call finish, then take the line.
    await control.waitQuiet();
    view?.mute(true);
    c.sw.route(undefined);
    await control.play(opts.holdMessage, hold.signal);
    if (opts.holdMusic !== 'none' && !hold.signal.aborted) {
      await c.session.outbound.writeStream(holdMusicFrames(opts.holdMusicVolume), hold.signal).catch(() => undefined);
    }
  })();
  const resume = async (outcome: WarmTransferResult): Promise<WarmTransferResult> => {
    hold.abort();
    await held;
    c.session.outbound.flush();
    if (view && !view.isEnded) {
      c.sw.route((f) => view.feed(f));
      view.mute(false);
    }
    await c.details.set({ transfer: { ...base, outcome: outcome.outcome, ...(outcome.outcome !== 'accepted' && outcome.detail ? { detail: outcome.detail } : {}) } });
    return outcome;
  };

  const dialed = await dialLeg(
    { ua: c.deps.ua, clock, createMedia: env.createMedia },
    { trunk, to, from, ringingMs: c.o.legRingingMs, signal: hold.signal },
  );
  if (!dialed.ok) {
    const outcome = dialed.reason === 'no-answer' ? 'no-answer' : dialed.reason === 'failed' ? 'failed' : 'refused';
    return resume({ outcome, detail: `supervisor leg: ${dialed.status}` });
  }
  const leg = dialed.leg;
  if (!c.active) {
    await leg.hangup();
    return { outcome: 'failed', detail: 'the caller left' };
  }
  const summary = await briefing(c, opts);
  const answer = await askSupervisor(c, leg, `${opts.briefingInitialMessage} ${summary} ${ACCEPT_PROMPT}`);
  if (answer !== 'accepted' || !c.active) {
    await leg.hangup();
    return resume({ outcome: answer === 'no-answer' ? 'no-answer' : 'refused', detail: `supervisor: ${answer}` });
  }
  hold.abort();
  await held;
  c.session.outbound.flush();
  await control.play(opts.connectedMessage);
  const bridge = new Bridge(leg, c.sw, c.session.outbound);
  c.bridge = bridge;
  bridge.start();
  c.beginHandover();
  control.recordLegs({ ...base, outcome: 'accepted', summary }, null, bridge);
  return { outcome: 'accepted' };
}

async function trunkForPhone(c: Conductor, phoneId: number) {
  const phone = await c.deps.env.repos.phoneNumbers.get(c.session.accountId, phoneId);
  if (!phone || phone.sipTrunkId === null) return undefined;
  return c.deps.env.trunks.list().find((t) => t.spec.id === phone.sipTrunkId);
}

/** The AI summary for the supervisor; the model's own words when the summariser is absent or slow. */
async function briefing(c: Conductor, opts: WarmTransferOptions): Promise<string> {
  const fallback = opts.modelSummary ?? opts.reason;
  const summarize = c.deps.summarize;
  if (!summarize) return fallback;
  const ac = new AbortController();
  const timer = c.deps.env.clock.setTimeout(() => ac.abort(), SUMMARY_TIMEOUT_MS);
  const context = `Reason for the transfer: ${opts.reason}\nWhat the assistant noted: ${opts.modelSummary ?? '(nothing)'}\nCaller number: ${c.callerNumber ?? 'unknown'}`;
  try {
    const text = (await summarize(c.assistant, opts.summaryInstructions, context, ac.signal)).trim();
    return text || fallback;
  } catch {
    return fallback;
  } finally {
    timer.cancel();
  }
}

/** Briefs the supervisor and waits for their key. */
async function askSupervisor(c: Conductor, leg: Leg, text: string): Promise<'accepted' | 'declined' | 'hung-up' | 'no-answer'> {
  let settle!: (v: 'accepted' | 'declined' | 'hung-up' | 'no-answer') => void;
  const answer = new Promise<'accepted' | 'declined' | 'hung-up' | 'no-answer'>((r) => (settle = r));
  const onDtmf = (e: { digit: string }): void => {
    if (e.digit === '1') settle('accepted');
    else if (e.digit === '2') settle('declined');
  };
  leg.media.on('dtmf', onDtmf);
  void leg.ended.then(() => settle('hung-up'));
  void c.session.done.then(() => settle('hung-up'));
  const speak = new AbortController();
  void answer.then(() => speak.abort());
  let window: { cancel(): void } | undefined;
  // The accept window opens once the briefing has been spoken (a key during it counts too).
  void leg.media.outbound.writeStream(c.speech(text, speak.signal), speak.signal).then(() => {
    if (!speak.signal.aborted) window = c.deps.env.clock.setTimeout(() => settle('no-answer'), c.o.supervisorAcceptMs);
  });
  try {
    return await answer;
  } finally {
    window?.cancel();
    leg.media.off('dtmf', onDtmf);
  }
}
