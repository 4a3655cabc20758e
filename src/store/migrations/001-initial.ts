/** The first schema. Later changes go in new numbered files; a shipped migration never changes. */
export const sql = `
CREATE TABLE accounts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  webhook_secret TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  amount_micros INTEGER NOT NULL,
  reason TEXT NOT NULL,
  reference TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX ledger_account ON ledger(account_id);
CREATE TABLE folders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE labels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE tools (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  parameters TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  method TEXT NOT NULL,
  headers TEXT NOT NULL,
  timeout_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE knowledge_bases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  description TEXT,
  created_at INTEGER NOT NULL
);
CREATE TABLE kb_documents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  knowledge_base_id INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  title TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE VIRTUAL TABLE kb_fts USING fts5(title, content, content='kb_documents', content_rowid='id');
CREATE TRIGGER kb_documents_ai AFTER INSERT ON kb_documents BEGIN
  INSERT INTO kb_fts(rowid, title, content) VALUES (new.id, new.title, new.content);
END;
CREATE TRIGGER kb_documents_ad AFTER DELETE ON kb_documents BEGIN
  INSERT INTO kb_fts(kb_fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
END;
CREATE TABLE sip_trunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  sip_trunk_type TEXT NOT NULL,
  phone_number TEXT NOT NULL,
  nickname TEXT,
  sip_username TEXT NOT NULL,
  sip_password_enc TEXT NOT NULL,
  sip_address TEXT NOT NULL,
  sip_calling_format TEXT NOT NULL,
  inbound_authorization_type TEXT NOT NULL,
  allowed_inbound_ips TEXT,
  outbound_proxy INTEGER NOT NULL DEFAULT 0,
  country_code TEXT NOT NULL,
  inbound_trunk_id TEXT NOT NULL,
  outbound_trunk_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (phone_number, sip_username, sip_address)
);
CREATE TABLE phone_numbers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  phone_number TEXT NOT NULL,
  type TEXT NOT NULL,
  sip_trunk_id INTEGER REFERENCES sip_trunks(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
);
CREATE INDEX phone_numbers_number ON phone_numbers(phone_number);
CREATE TABLE assistants (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL UNIQUE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  mode TEXT NOT NULL,
  status TEXT NOT NULL,
  phone_number_id INTEGER REFERENCES phone_numbers(id) ON DELETE SET NULL,
  folder_id INTEGER REFERENCES folders(id) ON DELETE SET NULL,
  inbound_webhook_enabled INTEGER NOT NULL DEFAULT 1,
  config TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX assistants_account ON assistants(account_id);
CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  assistant_id INTEGER NOT NULL,
  phone_number_id INTEGER NOT NULL,
  max_concurrent_calls INTEGER NOT NULL,
  calling_hours TEXT,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE leads (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  phone_number TEXT NOT NULL,
  variables TEXT,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_outcome TEXT,
  next_attempt_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX leads_campaign ON leads(campaign_id, status);
CREATE TABLE calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL UNIQUE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  assistant_id INTEGER,
  direction TEXT NOT NULL,
  sip_trunk_id INTEGER,
  phone_number_id INTEGER,
  from_number TEXT NOT NULL,
  to_number TEXT NOT NULL,
  status TEXT NOT NULL,
  end_cause TEXT,
  codec TEXT,
  sip_call_id TEXT,
  invite_at INTEGER NOT NULL,
  answer_at INTEGER,
  end_at INTEGER,
  quality TEXT,
  transcript TEXT,
  evaluation TEXT,
  recording_path TEXT,
  variables TEXT,
  campaign_id INTEGER,
  lead_id INTEGER,
  cost_micros INTEGER NOT NULL DEFAULT 0,
  details TEXT
);
CREATE INDEX calls_account ON calls(account_id, invite_at);
CREATE TABLE whatsapp_senders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  phone TEXT NOT NULL,
  assistant_id INTEGER,
  account_sid TEXT NOT NULL,
  auth_token_enc TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE conversations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL UNIQUE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  assistant_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  customer_identifier TEXT,
  external_identifier TEXT,
  variables TEXT,
  ai_enabled INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL,
  whatsapp_sender_id INTEGER,
  customer_phone TEXT,
  customer_name TEXT,
  last_message_at INTEGER NOT NULL,
  last_customer_message_at INTEGER,
  ended_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX conversations_customer ON conversations(assistant_id, customer_identifier)
  WHERE customer_identifier IS NOT NULL;
CREATE INDEX conversations_whatsapp ON conversations(whatsapp_sender_id, customer_phone);
CREATE INDEX conversations_active ON conversations(status, last_message_at);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  function_calls TEXT,
  provider_sid TEXT,
  delivery_status TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, id);
CREATE INDEX messages_sid ON messages(provider_sid);
CREATE TABLE webhook_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  event_type TEXT NOT NULL,
  url TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX webhook_outbox_due ON webhook_outbox(status, next_attempt_at);
`;
