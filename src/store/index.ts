import type { Store } from './db.ts';
import type { Clock } from '../util/clock.ts';
import { AccountsRepo } from './repos/accounts.ts';
import { LedgerRepo } from './repos/ledger.ts';
import { ConversationsRepo } from './repos/conversations.ts';
import { MessagesRepo } from './repos/messages.ts';
import { OutboxRepo } from './repos/outbox.ts';
import { SecretBox } from './secrets.ts';
import { FoldersRepo } from './repos/folders.ts';
import { LabelsRepo } from './repos/labels.ts';
import { ToolsRepo } from './repos/tools.ts';
import { KnowledgeBasesRepo } from './repos/knowledge-bases.ts';
import { PhoneNumbersRepo } from './repos/phone-numbers.ts';
import { SipTrunksRepo } from './repos/sip-trunks.ts';
import { CampaignsRepo } from './repos/campaigns.ts';
import { LeadsRepo } from './repos/leads.ts';
import { WhatsappSendersRepo } from './repos/whatsapp-senders.ts';
import { CallsRepo } from './repos/calls.ts';
import { AssistantsRepo } from './repos/assistants.ts';
import { LeasesRepo } from './repos/leases.ts';

/**
 * Every repository, built once per store, SQLite or PostgreSQL alike. Built over a store bound to
 * a transaction (src/store/dialect.ts inTransaction), every write joins that transaction.
 * `secrets` seals SIP passwords, provider tokens, custom tool headers and webhook signing secrets; it defaults to the data directory's key so
 * the CLI and the engine read each other's secrets. Pass the context's SecretBox when building one.
 */
export function createRepos(store: Store, clock: Clock, secrets: SecretBox = SecretBox.forDataDir(store.dataDir), opts: { nodeId?: string } = {}) {
  return {
    accounts: new AccountsRepo(store, clock, secrets),
    ledger: new LedgerRepo(store, clock),
    conversations: new ConversationsRepo(store, clock),
    messages: new MessagesRepo(store, clock),
    outbox: new OutboxRepo(store, clock),
    folders: new FoldersRepo(store, clock),
    labels: new LabelsRepo(store, clock),
    tools: new ToolsRepo(store, clock, secrets),
    knowledgeBases: new KnowledgeBasesRepo(store, clock),
    phoneNumbers: new PhoneNumbersRepo(store, clock),
    sipTrunks: new SipTrunksRepo(store, clock, secrets),
    campaigns: new CampaignsRepo(store, clock),
    leads: new LeadsRepo(store, clock),
    whatsappSenders: new WhatsappSendersRepo(store, clock, secrets),
    calls: new CallsRepo(store, clock, opts.nodeId),
    leases: new LeasesRepo(store),
    assistants: new AssistantsRepo(store, clock),
  };
}

export type Repos = ReturnType<typeof createRepos>;
export type { Store, SqliteStore } from './db.ts';
