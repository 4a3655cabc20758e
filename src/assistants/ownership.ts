import type { Store } from '../store/index.ts';
import { ownedIds, owns } from '../store/ownership.ts';
import { addError } from '../api/validation.ts';
import type { CreateInput } from './fields.ts';

type Errors = Record<string, string[]>;

/**
 * Rules that need the store: every referenced folder, label, tool, knowledge base, phone number
 * and assistant must belong to the account (another account's id reads as invalid, never as
 * "exists elsewhere"), plus the inbound phone number rules.
 * `selfId` is the assistant being updated (absent on create).
 */
export async function ownershipRules(store: Store, accountId: number, input: CreateInput, errors: Errors, selfId?: number): Promise<void> {
  if (input.folder_id != null && !(await owns(store, 'folders', accountId, input.folder_id))) {
    addError(errors, 'folder_id', 'The selected folder id is invalid.');
  }
  await many(store, accountId, 'labels', 'label_ids', input.label_ids ?? [], errors);
  await many(store, accountId, 'tools', 'tool_ids', input.tool_ids ?? [], errors);
  if (input.knowledgebase_id != null && !(await owns(store, 'knowledge_bases', accountId, input.knowledgebase_id))) {
    addError(errors, 'knowledgebase_id', 'The selected knowledgebase id is invalid.');
  }

  if (input.phone_number_id != null) {
    const phone = await store.db
      .selectFrom('phone_numbers')
      .select(['id', 'type'])
      .where('id', '=', input.phone_number_id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!phone) {
      addError(errors, 'phone_number_id', 'The selected phone number id is invalid.');
    } else if (input.type === 'inbound') {
      // A caller-ID number only presents an identity on outbound calls; nothing rings it.
      if (phone.type === 'caller_id') {
        addError(errors, 'phone_number_id', 'A caller ID number cannot be assigned to an inbound assistant.');
      } else {
        let q = store.db
          .selectFrom('assistants')
          .select('id')
          .where('phone_number_id', '=', phone.id)
          .where('type', '=', 'inbound');
        if (selfId !== undefined) q = q.where('id', '!=', selfId);
        if (await q.executeTakeFirst()) {
          addError(errors, 'phone_number_id', 'The phone number is already assigned to another inbound assistant.');
        }
      }
    }
  }

  const tools = input.tools ?? [];
  for (const [i, tool] of tools.entries()) {
    if (tool.type === 'warm_call_transfer' && !(await owns(store, 'phone_numbers', accountId, tool.outbound_phone_id))) {
      addError(errors, `tools.${i}.outbound_phone_id`, 'The selected outbound phone id is invalid.');
    }
    if (tool.type === 'assistant_transfer') {
      if (selfId !== undefined && tool.assistant_id === selfId) {
        addError(errors, `tools.${i}.assistant_id`, 'An assistant cannot transfer to itself.');
      } else if (!(await owns(store, 'assistants', accountId, tool.assistant_id))) {
        addError(errors, `tools.${i}.assistant_id`, 'The selected assistant id is invalid.');
      }
    }
  }
}

async function many(
  store: Store,
  accountId: number,
  table: 'labels' | 'tools',
  field: string,
  ids: readonly number[],
  errors: Errors,
): Promise<void> {
  const owned = await ownedIds(store, table, accountId, ids);
  const bad = [...new Set(ids.filter((id) => !owned.has(id)))];
  if (bad.length > 0) addError(errors, field, `The selected ${field.replace(/_/g, ' ')} are invalid: ${bad.join(', ')}.`);
}
