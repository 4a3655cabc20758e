import { Catalog } from '../../../src/catalog/catalog.ts';
import { openMemoryStore, type Store } from '../../../src/store/db.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { ValidationError } from '../../../src/util/errors.ts';
import { validateCreate, type AssistantDeps } from '../../../src/assistants/service.ts';

/** Built-in catalog ids the tests rely on. */
export const IDS = {
  enUS: 1,
  esES: 3,
  gpt4oMini: 1,
  gptRealtime: 1,
  gpt4oRealtimePreview: 2,
  realtimeAlloy: 101,
  realtimeMarin: 109,
  ttsAlloy: 121,
  fliteSlt: 151,
  openaiTts: 1,
  flite: 2,
  deepgram: 1,
  openaiStt: 2,
};

export function base(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Support',
    voice_id: IDS.ttsAlloy,
    language_id: IDS.enUS,
    type: 'outbound',
    mode: 'pipeline',
    timezone: 'Europe/Paris',
    initial_message: 'Hello!',
    system_prompt: 'You are helpful.',
    llm_model_id: IDS.gpt4oMini,
    ...over,
  };
}

export function realtime(over: Record<string, unknown> = {}): Record<string, unknown> {
  const b = base({ mode: 'multimodal', voice_id: IDS.realtimeAlloy, multimodal_model_id: IDS.gptRealtime, ...over });
  if (!('llm_model_id' in over)) delete b.llm_model_id;
  return b;
}

export interface Harness {
  deps: AssistantDeps;
  store: Store;
  accountId: number;
  otherAccountId: number;
  /** Field errors of a rejected body, or undefined when it is accepted. */
  errorsOf(body: unknown): Promise<Record<string, string[]> | undefined>;
  close(): Promise<void>;
}

export async function harness(): Promise<Harness> {
  const store = openMemoryStore();
  const deps: AssistantDeps = {
    catalog: Catalog.load({ publicUrl: 'http://sb.test' }),
    store,
    secrets: new SecretBox(Buffer.alloc(32, 3)),
  };
  const mk = async (name: string) =>
    (await store.db.insertInto('accounts').values({ name, webhook_secret: 'x', created_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
  const accountId = await mk('a');
  const otherAccountId = await mk('b');
  return {
    deps,
    store,
    accountId,
    otherAccountId,
    async errorsOf(body) {
      try {
        await validateCreate(deps, accountId, body);
        return undefined;
      } catch (err) {
        if (err instanceof ValidationError) return err.errors;
        throw err;
      }
    },
    close: () => store.close(),
  };
}

export async function insertPhone(store: Store, accountId: number, type: 'sip_trunk' | 'caller_id' = 'sip_trunk'): Promise<number> {
  const row = await store.db
    .insertInto('phone_numbers')
    .values({ account_id: accountId, phone_number: '+15550001111', type, sip_trunk_id: null, created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function insertNamed(store: Store, table: 'folders' | 'labels', accountId: number): Promise<number> {
  return (await store.db.insertInto(table).values({ account_id: accountId, name: 'n', created_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertTool(store: Store, accountId: number): Promise<number> {
  return (
    await store.db
      .insertInto('tools')
      .values({ account_id: accountId, name: 't', description: 'd', parameters: '{}', endpoint: 'https://x.test', method: 'POST', headers: '{}', timeout_ms: 1000, created_at: 0, updated_at: 0 })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

export async function insertKb(store: Store, accountId: number): Promise<number> {
  return (await store.db.insertInto('knowledge_bases').values({ account_id: accountId, name: 'kb', description: null, created_at: 0 }).returning('id').executeTakeFirstOrThrow()).id;
}
