/**
 * How a voice turn asks the agent: the history so far, the call's variables, and the voice-only
 * built-ins (end_call) that the agent leaves to the voice session (src/agent/tools.ts).
 */
import type { AgentTool, TurnInput, TurnMessage, TurnResult } from '../../agent/types.ts';
import type { CascadeAssistant, CascadeSettings } from './options.ts';
import type { TurnSource } from './spoken-turn.ts';

export function voiceTools(settings: CascadeSettings): AgentTool[] {
  const endCall = settings.endCallTool;
  if (!endCall) return [];
  return [
    {
      spec: {
        name: 'end_call',
        description: `End the phone call once the conversation is complete; say goodbye in the same reply. ${endCall.description}`.trim(),
        parameters: { type: 'object', properties: {} },
      },
      ends: true,
      run: async () => ({ ended: true }),
    },
  ];
}

export interface AgentSourceInput {
  agent: { runTurn(input: TurnInput): Promise<TurnResult> };
  assistant: CascadeAssistant;
  history: readonly TurnMessage[];
  variables: Record<string, unknown> | undefined;
  tools: AgentTool[];
  /** A re-engagement: no caller words to answer, so the guidance stands in for them. */
  reengagementPrompt?: string;
}

export function agentSource(i: AgentSourceInput): TurnSource {
  return {
    kind: 'agent',
    run: (signal, onToken) => {
      const history = [...i.history];
      if (i.reengagementPrompt) history.push({ role: 'user', content: `(The caller has been silent for a while.) ${i.reengagementPrompt}` });
      return i.agent.runTurn({
        assistant: i.assistant,
        history,
        variables: i.variables ?? null,
        signal,
        onToken,
        channel: 'voice',
        extraTools: i.tools,
      });
    },
  };
}
