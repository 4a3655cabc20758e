/** PostgreSQL twin of ../010-leases.ts: leases for work done once across nodes (docs/WORK-ONCE.md). */
export const sql = `
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
ALTER TABLE leads ADD COLUMN lease_holder TEXT;
ALTER TABLE leads ADD COLUMN lease_expires_at BIGINT;
ALTER TABLE webhook_outbox ADD COLUMN lease_holder TEXT;
ALTER TABLE webhook_outbox ADD COLUMN lease_expires_at BIGINT;
CREATE INDEX leads_calling_lease ON leads(campaign_id, status, lease_expires_at);
`;
