/**
 * warm_call_transfer: the caller waits on hold while a supervisor is dialled and briefed.
 *
 * 1. The engine is muted and the caller's audio goes nowhere (so a caller talking on hold does
 *    not start a turn); the caller hears `hold_message`, then hold music at `hold_music_volume`
 *    (hold-music.ts) or silence with `hold_music: none`.
 * 2. The supervisor is dialled through the trunk of `outbound_phone_id` (`custom_sip`: the
 *    address as is, or an extension on that trunk's host) with the caller ID of
 *    `caller_id_mode` (caller-id.ts).
 * 3. Once they answer they hear `briefing_initial_message`, the AI summary (written per
 *    `summary_instructions` from the call's transcript so far, the model's reason and notes),
 *    and the question. They answer with a key (1 takes the call, 2 declines) or, when the
 *    assistant has an STT, in words ("yes, put them through", "no, I can't"); supervisor.ts has
 *    the rules, including unclear words (ignored: still waiting). Declining, hanging up, or
 *    `supervisorAcceptMs` without an answer after the question is a refusal.
 * 4. Accepted: hold music stops, the caller hears `connected_message`, the legs are bridged.
 *    Otherwise the supervisor leg is hung up, the caller's audio goes back to the engine and the
 *    tool tells the model, which apologises and carries on.
 */
import type { WarmTransferOptions, WarmTransferResult } from '../tools/control.ts';
import { Bridge } from './bridge.ts';
import { warmCallerId } from './caller-id.ts';
import type { Conductor } from './conductor.ts';
import { holdMusicFrames } from './hold-music.ts';
import { dialWithCallerId } from './leg.ts';
import { callerIdRecord, type SessionControl } from './session-control.ts';
import { askSupervisor, type SupervisorAnswer } from './supervisor.ts';
import { trunkUri } from '../../sip/trunk-registry.ts';

const SUMMARY_TIMEOUT_MS = 8_000;

export async function warmTransfer(c: Conductor, control: SessionControl, opts: WarmTransferOptions): Promise<WarmTransferResult> {
  const { env } = c.deps;
  const clock = env.clock;
  const trunk = await trunkForPhone(c, opts.outboundPhoneId);
  if (!trunk) return { outcome: 'failed', detail: `phone number ${opts.outboundPhoneId} has no live trunk` };
  const base: Record<string, unknown> = { type: 'warm', supervisor: opts.supervisor, reason: opts.reason, started_at: clock.now() };
  const callerId = warmCallerId(opts.callerIdMode, trunk.spec, c.callerNumber, opts.customCallerId);
  const to = opts.customSip && !/^sips?:/i.test(opts.supervisor) ? trunkUri(trunk.spec, opts.supervisor) : opts.supervisor;

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

  const dialed = await dialWithCallerId(
    { ua: c.deps.ua, clock, createMedia: env.createMedia },
    { trunk, to, callerId, ringingMs: c.o.legRingingMs, signal: hold.signal },
  );
  base.caller_id = callerIdRecord(dialed.callerId, dialed.passthroughRefused);
  if (!dialed.ok) {
    const outcome = dialed.reason === 'no-answer' ? 'no-answer' : dialed.reason === 'failed' ? 'failed' : 'refused';
    return resume({ outcome, detail: `supervisor leg: ${dialed.status}${dialed.cause ? ` ${dialed.cause}` : ''}` });
  }
  const leg = dialed.leg;
  if (!c.active) {
    await leg.hangup();
    return { outcome: 'failed', detail: 'the caller left' };
  }
  const summary = await briefing(c, opts);
  const answer = await askSupervisor(c, leg, `${opts.briefingInitialMessage} ${summary}`);
  base.supervisor_answer = answerRecord(answer);
  if (answer.outcome !== 'accepted' || !c.active) {
    await leg.hangup();
    return resume({ outcome: answer.outcome === 'no-answer' ? 'no-answer' : 'refused', detail: `supervisor: ${answer.outcome}` });
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
  c.session.log.info({ type: 'warm', method: 'bridge', supervisor: opts.supervisor }, 'call transferred');
  return { outcome: 'accepted' };
}

async function trunkForPhone(c: Conductor, phoneId: number) {
  const phone = await c.deps.env.repos.phoneNumbers.get(c.session.accountId, phoneId);
  if (!phone || phone.sipTrunkId === null) return undefined;
  return c.deps.env.trunks.list().find((t) => t.spec.id === phone.sipTrunkId);
}

function answerRecord(a: SupervisorAnswer): Record<string, unknown> {
  return {
    outcome: a.outcome,
    ...(a.by ? { by: a.by } : {}),
    ...(a.heard ? { heard: a.heard } : {}),
    ...(a.unclear.length > 0 ? { unclear: a.unclear } : {}),
    ...(a.stt ? { stt: a.stt } : {}),
  };
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
    const brief = { instructions: opts.summaryInstructions, context, transcript: c.conversation() };
    const text = (await summarize(c.assistant, brief, ac.signal)).trim();
    return text || fallback;
  } catch {
    return fallback;
  } finally {
    timer.cancel();
  }
}
