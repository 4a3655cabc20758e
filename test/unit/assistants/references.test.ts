import { describe, expect, it } from 'vitest';
import { referencedIds, withoutGone } from '../../../src/assistants/references.ts';
import type { StoredTool } from '../../../src/assistants/tools.ts';

const warm = (phone: number): StoredTool =>
  ({ type: 'warm_call_transfer', data: { supervisor_phone: '+14155550111', outbound_phone_id: phone, description: 'x' } }) as unknown as StoredTool;
const toAssistant = (id: number): StoredTool => ({ type: 'assistant_transfer', data: { assistant_id: id } }) as unknown as StoredTool;
const endCall = { type: 'end_call', data: {} } as unknown as StoredTool;

const config = {
  phone_number_id: 5,
  folder_id: 2,
  label_ids: [1, 2, 3],
  tool_ids: [7, 8],
  knowledgebase_id: 4,
  tools: [warm(6), toAssistant(9), endCall],
  name: 'kept',
};

describe('assistant references', () => {
  it('lists every id the configuration points at, by kind', () => {
    expect(referencedIds(config)).toEqual({
      phoneNumbers: new Set([5, 6]),
      folders: new Set([2]),
      labels: new Set([1, 2, 3]),
      tools: new Set([7, 8]),
      knowledgeBases: new Set([4]),
      assistants: new Set([9]),
    });
  });

  it('returns the same object when nothing it references is gone', () => {
    expect(withoutGone(config, { phoneNumbers: new Set([99]), labels: new Set([42]) })).toBe(config);
  });

  it('clears single references, filters lists and removes tools that lost what they need, touching nothing else', () => {
    const out = withoutGone(config, {
      phoneNumbers: new Set([5, 6]),
      folders: new Set([2]),
      labels: new Set([2]),
      tools: new Set([7]),
      knowledgeBases: new Set([4]),
      assistants: new Set([9]),
    });
    expect(out).toEqual({ ...config, phone_number_id: null, folder_id: null, label_ids: [1, 3], tool_ids: [8], knowledgebase_id: null, tools: [endCall] });
    expect(config.phone_number_id).toBe(5); // the input is not changed
  });

  it('a warm transfer from another number survives the deletion of the assistant number', () => {
    const out = withoutGone(config, { phoneNumbers: new Set([5]) });
    expect(out.phone_number_id).toBeNull();
    expect(out.tools).toEqual(config.tools);
  });
});
