/**
 * Calls meet the AI: the one place the composition root (src/main.ts) builds everything an
 * answered assistant call needs — the shared models (VAD, denoiser, Flite), the speech providers,
 * the agent, the latency metrics on the API's /metrics registry — into one EngineContext, the
 * CallEnv.engine hook that runs a call on it (call-runner.ts), and the post-call sweeper.
 *
 * Order of use: `wireCalls` before the SIP server starts (its hook goes into SipServer.start);
 * `attachSip(sip)` right after the server started (calls then run under call control: voice tools,
 * voicemail detection, transfers); `start()` once the server is up (closes records a previous run left open, then sweeps);
 * `close()` after the SIP server has drained (its calls may still be finishing).
 */
import type client from 'prom-client';
import { liveFeedOf, type AppContext } from '../../context.ts';
import type { LlmRegistry } from '../../providers/llm/registry.ts';
import type { EventPublisher } from '../../webhooks/events.ts';
import type { CallEngine } from '../call-env.ts';
import type { EngineContext } from '../engine.ts';
import { postCallDeps, type PostCallDeps } from '../post-call/index.ts';
import { CallRunner, type CallControlSip, type RealtimeRunner } from './call-runner.ts';
import { loadEngineParts } from './engine-parts.ts';
import { PostCallSweeper } from './sweeper.ts';
import { agentDeps } from '../../chat/agent-deps.ts';
import { realtimeRunner } from './realtime.ts';
import { outboundOf } from '../../net/outbound/index.ts';
import { recordingsOf } from '../../blobs/index.ts';

export type { CallControlSip, EngineOutcome, RealtimeRunner } from './call-runner.ts';

export interface WireCallsInput {
  ctx: AppContext;
  /** The chat side's LLM registry and agent: one per process, shared with calls. */
  llm: LlmRegistry;
  agent: EngineContext['agent'];
  /** Where call.completed goes (the persisted outbox; the delivery worker signs and retries). */
  events: Pick<EventPublisher, 'publish'>;
  metricsRegistry: client.Registry;
  /** The multimodal/dualplex engine; default: src/call/realtime over the OpenAI realtime protocol. */
  realtime?: (engine: EngineContext) => RealtimeRunner;
  sweepIntervalMs?: number;
}

export interface CallWiring {
  engine: CallEngine;
  engineContext: EngineContext;
  postCall: PostCallDeps;
  sweeper: PostCallSweeper;
  /** The SIP server's UA and CallEnv, for call control (src/call/control); call once it is up. */
  attachSip(sip: CallControlSip): void;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function wireCalls(input: WireCallsInput): Promise<CallWiring> {
  const { ctx } = input;
  const startedAt = ctx.clock.now();
  const parts = await loadEngineParts({
    config: ctx.config,
    clock: ctx.clock,
    logger: ctx.logger,
    catalog: ctx.catalog,
    agent: input.agent,
    metricsRegistry: input.metricsRegistry,
    ...(ctx.providerMetrics ? { providerMetrics: ctx.providerMetrics } : {}),
  });
  // The engine's transcript lines and timeline events go to the same feed the API serves.
  parts.ctx.live = liveFeedOf(ctx);
  const postCall = postCallDeps(ctx, input.llm, input.events);
  const runner = new CallRunner({
    engine: parts.ctx,
    calls: ctx.repos.calls,
    postCall,
    logger: ctx.logger.child({ part: 'calls' }),
    realtime: input.realtime ? input.realtime(parts.ctx) : realtimeRunner(parts.ctx, ctx, agentDeps(ctx, input.llm)),
    // The calendar tool's key is sealed at rest; its custom endpoint is a customer URL.
    recordings: recordingsOf(ctx),
    conductor: { calendar: { openSecret: (sealed) => ctx.secrets.open(sealed), fetch: outboundOf(ctx).fetch } },
  });
  const sweeper = new PostCallSweeper({
    store: ctx.store,
    assistants: ctx.repos.assistants,
    postCall,
    logger: ctx.logger.child({ part: 'post-call' }),
    busy: (uuid) => runner.busy(uuid),
    active: () => ctx.sweepLease?.held ?? true,
    nodeId: ctx.config.cluster.nodeId,
    staleAfterMs: 4 * ctx.config.callHeartbeatMs,
    ...(input.sweepIntervalMs !== undefined ? { intervalMs: input.sweepIntervalMs } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    engine: runner.engine,
    engineContext: parts.ctx,
    postCall,
    sweeper,
    attachSip(sip) {
      runner.attachSip(sip);
    },
    async start() {
      // Never fatal: a store hiccup here delays post-call work, it must not stop the engine.
      try {
        await sweeper.closeOrphans(startedAt);
        // The first pass finishes what the previous run left owed; later ones run on the timer
        // (on the node holding the sweep lease when there are several).
        if (ctx.sweepLease?.held ?? true) await sweeper.sweep();
      } catch (err) {
        ctx.logger.error({ err: (err as Error).message }, 'start-up post-call sweep failed');
      }
      sweeper.start();
    },
    close() {
      closing ??= (async () => {
        await sweeper.stop();
        await parts.close();
      })();
      return closing;
    },
  };
}
