/**
 * The pipeline engine hands the call's voice tools (CascadeDeps.voiceTools, what the conductor
 * passes through startEngine) to the agent, and an `ends` tool makes it close its media after
 * the reply — which the conductor turns into a handover or a BYE.
 */
import { describe, expect, it } from 'vitest';
import type { AgentTool } from '../../../src/agent/types.ts';
import { runCall, say } from '../cascade/harness.ts';

describe('cascade with call-control voice tools', () => {
  it('offers the tools to the model, runs them, and closes the media after an ends tool', async () => {
    const ran: Record<string, unknown>[] = [];
    const tool: AgentTool = {
      spec: { name: 'transfer_call', description: 'Transfer the caller.', parameters: { type: 'object', properties: {} } },
      ends: true,
      run: async (args) => {
        ran.push(args);
        return { transferred: true };
      },
    };
    const { result, llm } = await runCall({
      script: { items: [say('utt-cancel', 3000)], hangUpAtMs: 30_000 },
      llm: (l) => l.queue.push({ content: 'Let me transfer you.', toolCalls: [{ name: 'transfer_call', arguments: { reason: 'x' } }] }, { content: '' }),
      deps: { voiceTools: [tool] },
    });
    expect(ran).toEqual([{ reason: 'x' }]);
    expect(llm.requests.length).toBeGreaterThanOrEqual(1);
    expect(result.endedBy).toBe('end-call-tool');
  });
});
