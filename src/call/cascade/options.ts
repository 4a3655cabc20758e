/**
 * The assistant's fields (snake_case, spec units) → the engine's core options. One place, so a
 * replay of an assistant JSON and a live call read the fields the same way.
 */
import type { AssistantConfig } from '../../assistants/config.ts';
import type { AgentAssistant } from '../../agent/types.ts';
import { fillTemplate, mergeVariables } from '../../agent/template.ts';
import type { AmbientSoundSetting } from '../../audio/ambient.ts';
import type { FillerConfig } from '../fillers.ts';
import type { InterruptionOptions } from '../interruption.ts';
import { callRulesOptions, type CallRulesOptions } from '../rules.ts';
import type { TurnTakingOptions } from '../turn-taking.ts';

/** What the engine reads; an AssistantRecord satisfies it, and so does a replay's JSON file. */
export interface CascadeAssistant extends AgentAssistant {
  config: Partial<AssistantConfig> & AgentAssistant['config'];
}

export interface CascadeSettings {
  initialMessage: string;
  waitForCustomer: boolean;
  turnTaking: TurnTakingOptions;
  interruption: InterruptionOptions;
  rules: CallRulesOptions;
  fillers: { enabled: boolean; config?: FillerConfig };
  ambient: { sound: AmbientSoundSetting; volume: number };
  noiseCancellation: boolean;
  record: boolean;
  endCallTool: { description: string } | undefined;
  variables: Record<string, unknown>;
  fill(text: string): string;
}

export function cascadeSettings(assistant: CascadeAssistant, callVariables?: Record<string, unknown> | null): CascadeSettings {
  const c = assistant.config;
  const variables = mergeVariables(c.variables, callVariables);
  const fill = (text: string): string => fillTemplate(text, variables);
  const endCall = (c.tools ?? []).find((t) => t.type === 'end_call');
  const endCallData = endCall?.data as { description?: unknown } | undefined;
  const interruption: InterruptionOptions = {
    allowInterruptions: c.allow_interruptions ?? true,
    interruptSensitivity: c.interrupt_sensitivity ?? 0.5,
  };
  if (c.min_interrupt_words != null) interruption.minInterruptWords = c.min_interrupt_words;
  const rules = callRulesOptions({
    max_duration: c.max_duration,
    max_silence_duration: c.max_silence_duration,
    reengagement_interval: c.reengagement_interval,
    reengagement_prompt: c.reengagement_prompt ? fill(c.reengagement_prompt) : null,
    max_initial_silence_duration: c.max_initial_silence_duration,
  });
  const fillers: CascadeSettings['fillers'] = { enabled: c.fillers ?? false };
  if (c.filler_config) fillers.config = c.filler_config;
  return {
    initialMessage: fill(c.initial_message ?? ''),
    waitForCustomer: c.wait_for_customer ?? false,
    turnTaking: { endpointType: c.endpoint_type ?? 'vad', endpointSensitivity: c.endpoint_sensitivity ?? 0.5 },
    interruption,
    rules,
    fillers,
    ambient: { sound: c.ambient_sound ?? undefined, volume: c.ambient_sound_volume ?? 0.5 },
    noiseCancellation: c.enable_noise_cancellation ?? true,
    record: c.record ?? false,
    endCallTool: endCall
      ? { description: typeof endCallData?.description === 'string' ? endCallData.description : '' }
      : undefined,
    variables,
    fill,
  };
}
