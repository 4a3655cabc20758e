/**
 * Multimodal and dualplex assistants run on the realtime engine (src/call/realtime): the same
 * EngineContext as the pipeline plus the realtime model link, built here once per engine. The
 * model speaks the OpenAI realtime protocol at OPENAI_BASE_URL (as config parsed it, never read
 * from the environment here).
 */
import type { AppContext } from '../../context.ts';
import type { AgentDeps } from '../../agent/types.ts';
import { OpenAiRealtime } from '../../providers/realtime/openai-realtime.ts';
import { instrumentRealtime } from '../../telemetry/provider-metrics.ts';
import { traceRealtime } from '../../telemetry/provider-spans.ts';
import type { EngineContext } from '../engine.ts';
import { startRealtimeEngine, type RealtimeEngineContext } from '../realtime/index.ts';
import type { RealtimeRunner } from './call-runner.ts';

export function realtimeRunner(engine: EngineContext, ctx: Pick<AppContext, 'config' | 'catalog' | 'logger' | 'providerMetrics'>, agentDeps: AgentDeps): RealtimeRunner {
  const link = traceRealtime(new OpenAiRealtime({ logger: ctx.logger.child({ part: 'realtime' }) }));
  const rctx: RealtimeEngineContext = {
    ...engine,
    catalog: ctx.catalog,
    realtime: {
      provider: ctx.providerMetrics ? instrumentRealtime(link, ctx.providerMetrics) : link,
      apiKey: ctx.config.openai.apiKey ?? '',
      ...(ctx.config.openai.baseUrl ? { baseUrl: ctx.config.openai.baseUrl } : {}),
    },
    agentDeps,
    languageName: (id) => agentDeps.languageName?.(id),
  };
  return (session, assistant, callVariables, control) => startRealtimeEngine(session, assistant, rctx, callVariables, control);
}
