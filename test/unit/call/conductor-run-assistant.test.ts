/**
 * What one engine run sees of its assistant: a callee who already said "hello?" during voicemail
 * detection satisfies wait_for_customer (the assistant speaks first); a silent swap drops the greeting.
 */
import { describe, expect, it } from 'vitest';
import { runAssistant } from '../../../src/call/control/conductor.ts';
import type { AssistantRecord } from '../../../src/store/repos/assistants.ts';

const assistant = (config: Record<string, unknown>): AssistantRecord =>
  ({ id: 1, mode: 'pipeline', config: { initial_message: 'Hi!', wait_for_customer: true, ...config } }) as unknown as AssistantRecord;

describe('runAssistant', () => {
  it('keeps wait_for_customer when the customer has not spoken (inbound, unknown verdict with no speech)', () => {
    const a = assistant({});
    expect(runAssistant(a, true, false)).toBe(a);
  });

  it('turns wait_for_customer off once the customer spoke, keeping the initial message', () => {
    const a = assistant({});
    const run = runAssistant(a, true, true);
    expect(run.config.wait_for_customer).toBe(false);
    expect(run.config.initial_message).toBe('Hi!');
    expect(a.config.wait_for_customer).toBe(true); // the record itself is untouched
  });

  it('clears the greeting after a silent swap', () => {
    const run = runAssistant(assistant({}), false, false);
    expect(run.config.initial_message).toBe('');
    expect(run.config.wait_for_customer).toBe(true);
  });
});
