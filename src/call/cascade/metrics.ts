/**
 * Per-turn latency histograms for /metrics. Created against the registry the composition root
 * passes in (one per engine instance, as src/api/metrics.ts does), never the global one.
 */
import client from 'prom-client';
import type { TurnLatency } from '../transcript.ts';

const PARTS: Record<Exclude<keyof TurnLatency, 'totalMs'>, string> = {
  endpointingMs: 'endpointing',
  sttFinalMs: 'stt_final',
  llmFirstTokenMs: 'llm_first_token',
  ttsFirstAudioMs: 'tts_first_audio',
  firstFrameOutMs: 'first_frame_out',
};

export interface CascadeMetrics {
  turnLatency: client.Histogram<'part'>;
  responseGap: client.Histogram<string>;
  interruptions: client.Counter<'taken'>;
  observe(latency: TurnLatency): void;
}

export function createCascadeMetrics(registry: client.Registry): CascadeMetrics {
  const buckets = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
  const turnLatency = new client.Histogram({
    name: 'switchboard_turn_latency_seconds',
    help: 'Per-turn latency parts of pipeline replies (endpointing, stt_final, llm_first_token, tts_first_audio, first_frame_out)',
    labelNames: ['part'] as const,
    buckets,
    registers: [registry],
  });
  const responseGap = new client.Histogram({
    name: 'switchboard_turn_response_gap_seconds',
    help: "From the end of the caller's speech to the first reply frame sent",
    buckets,
    registers: [registry],
  });
  const interruptions = new client.Counter({
    name: 'switchboard_interruptions_total',
    help: 'Caller speech over the assistant, by whether it interrupted',
    labelNames: ['taken'] as const,
    registers: [registry],
  });
  return {
    turnLatency,
    responseGap,
    interruptions,
    observe(latency) {
      for (const [key, part] of Object.entries(PARTS)) {
        const ms = latency[key as keyof typeof PARTS];
        if (ms !== undefined && ms >= 0) turnLatency.observe({ part }, ms / 1000);
      }
      if (latency.totalMs !== undefined && latency.totalMs >= 0) responseGap.observe(latency.totalMs / 1000);
    },
  };
}
