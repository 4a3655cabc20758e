import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of every table, as Kysely sees them. JSON columns hold text (parsed by the
 * repositories); money is integer micro-dollars; timestamps are epoch milliseconds.
 */
type Json = string;
type Ms = number;
type Flag = number; // SQLite has no boolean: 0 or 1

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  /** The signing secret, sealed (older builds stored it in clear; sealed on the next start). */
  webhook_secret: string;
  created_at: Ms;
  /** The secret the last rotation replaced, sealed: it signs too until `webhook_secret_previous_until`. */
  webhook_secret_previous: ColumnType<string | null, string | null | undefined, string | null>;
  webhook_secret_previous_until: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  prefix: string;
  hash: string; // hex SHA-256 of the key
  created_at: Ms;
  revoked_at: Ms | null;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: number;
  amount_micros: number; // positive top-up, negative charge
  reason: string;
  reference: string | null;
  created_at: Ms;
}

export interface AssistantsTable {
  id: Generated<number>;
  uuid: string;
  account_id: number;
  name: string;
  type: string;
  mode: string;
  status: string;
  phone_number_id: number | null;
  folder_id: number | null;
  inbound_webhook_enabled: Flag;
  config: Json; // every other field of the assistant, as accepted by the API
  created_at: Ms;
  updated_at: Ms;
}

export interface NamedTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  created_at: Ms;
}

export interface ToolsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string;
  parameters: Json;
  endpoint: string;
  method: string;
  headers: Json;
  timeout_ms: number;
  created_at: Ms;
  updated_at: Ms;
}

export interface KnowledgeBasesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string | null;
  created_at: Ms;
}

export interface KbDocumentsTable {
  id: Generated<number>;
  knowledge_base_id: number;
  account_id: number;
  title: string;
  content: string;
  created_at: Ms;
}

export interface PhoneNumbersTable {
  id: Generated<number>;
  account_id: number;
  phone_number: string;
  type: string; // 'sip_trunk' | 'caller_id'
  sip_trunk_id: number | null;
  created_at: Ms;
}

export interface SipTrunksTable {
  id: Generated<number>;
  account_id: number;
  sip_trunk_type: string;
  phone_number: string;
  nickname: string | null;
  sip_username: string;
  sip_password_enc: string;
  sip_address: string;
  sip_calling_format: string;
  inbound_authorization_type: string;
  allowed_inbound_ips: Json | null;
  outbound_proxy: Flag;
  transport: string | null;
  /** Learn a call's RTP source behind NAT even where the SDP names a public address. */
  media_nat: Flag;
  country_code: string;
  /** 'off' | 'offered' | 'required' (SDES-SRTP policy). */
  srtp: Generated<string>;
  inbound_trunk_id: string;
  outbound_trunk_id: string;
  created_at: Ms;
  updated_at: Ms;
}

export interface CampaignsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  assistant_id: number;
  phone_number_id: number;
  max_concurrent_calls: number;
  calling_hours: Json | null;
  status: string; // draft | in-progress | stopped | completed
  created_at: Ms;
  updated_at: Ms;
}

export interface LeadsTable {
  id: Generated<number>;
  campaign_id: number;
  account_id: number;
  phone_number: string;
  variables: Json | null;
  status: string; // pending | calling | done | failed
  attempts: number;
  last_outcome: string | null;
  next_attempt_at: Ms | null;
  created_at: Ms;
  updated_at: Ms;
  /** The node dialing this `calling` lead, and until when (migration 009). */
  lease_holder: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
}

export interface CallsTable {
  id: Generated<number>;
  uuid: string;
  account_id: number;
  assistant_id: number | null;
  direction: string; // inbound | outbound
  sip_trunk_id: number | null;
  phone_number_id: number | null;
  from_number: string;
  to_number: string;
  status: string;
  end_cause: string | null;
  codec: string | null;
  sip_call_id: string | null;
  invite_at: Ms;
  answer_at: Ms | null;
  end_at: Ms | null;
  quality: Json | null;
  transcript: Json | null;
  evaluation: Json | null;
  recording_path: string | null;
  variables: Json | null;
  campaign_id: number | null;
  lead_id: number | null;
  cost_micros: number;
  details: Json | null; // transfer legs, voicemail verdict, other evidence
  /** The last heartbeat while the call was live (src/call/call-heartbeat.ts); a crash-cut call ends here. */
  last_alive_at: Ms | null;
  /** The engine node that carried the call (SWITCHBOARD_NODE_ID; migration 008); NULL on older rows. */
  node_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ConversationsTable {
  id: Generated<number>;
  uuid: string;
  account_id: number;
  assistant_id: number;
  type: string; // widget | test | api | whatsapp
  customer_identifier: string | null;
  external_identifier: string | null;
  variables: Json | null;
  ai_enabled: Flag;
  status: string; // active | ended
  whatsapp_sender_id: number | null;
  customer_phone: string | null;
  customer_name: string | null;
  last_message_at: Ms;
  last_customer_message_at: Ms | null;
  ended_at: Ms | null;
  created_at: Ms;
  /** When the inactivity sweeper ends it (migration 002). */
  inactivity_deadline: Ms | null;
  ended_reason: string | null;
}

export interface MessagesTable {
  id: Generated<number>;
  conversation_id: number;
  role: string; // user | assistant | agent
  content: string;
  function_calls: Json | null;
  provider_sid: string | null;
  delivery_status: string | null;
  created_at: Ms;
}

export interface WhatsappSendersTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  phone: string;
  assistant_id: number | null;
  account_sid: string;
  auth_token_enc: string;
  status: string; // online | offline
  created_at: Ms;
  updated_at: Ms;
}

export interface WebhookOutboxTable {
  id: Generated<number>;
  account_id: number;
  event_type: string;
  url: string;
  payload: Json;
  status: string; // pending | delivered | failed
  attempts: number;
  next_attempt_at: Ms;
  last_error: string | null;
  created_at: Ms;
  delivered_at: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
  /** The node delivering the row's current attempt, and until when (migration 009). */
  lease_holder: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: ColumnType<Ms | null, Ms | null | undefined, Ms | null>;
}

/** Named leases: one holder at a time until `expires_at` (migration 009, src/store/repos/leases.ts). */
export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: Ms;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  assistants: AssistantsTable;
  folders: NamedTable;
  labels: NamedTable;
  tools: ToolsTable;
  knowledge_bases: KnowledgeBasesTable;
  kb_documents: KbDocumentsTable;
  phone_numbers: PhoneNumbersTable;
  sip_trunks: SipTrunksTable;
  campaigns: CampaignsTable;
  leads: LeadsTable;
  calls: CallsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  whatsapp_senders: WhatsappSendersTable;
  webhook_outbox: WebhookOutboxTable;
  leases: LeasesTable;
}
