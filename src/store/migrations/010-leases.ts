/**
 * Work done once across a cluster of engine nodes sharing this database (docs/WORK-ONCE.md).
 *
 * - `leases`: named leases (one holder at a time until `expires_at`, epoch ms), for work one
 *   node does for everyone: the sweeps, the registrations of `auth` trunks.
 * - `leads.lease_holder` / `lease_expires_at`: the node dialing a `calling` lead, renewed while its
 *   call lasts; once expired, another node settles the attempt (never a blind redial).
 * - `webhook_outbox.lease_holder` / `lease_expires_at`: the node delivering a row's attempt; a row
 *   whose holder died is tried again (as the next attempt) once the lease lapses.
 * (`calls.node_id`, migration 008, names the node that carried a call, so a restarting node
 * closes only its own orphans and leaves the live calls of the others alone.)
 *
 * Plain SQL both SQLite and PostgreSQL accept.
 */
export const sql = `
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
ALTER TABLE leads ADD COLUMN lease_holder TEXT;
ALTER TABLE leads ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE webhook_outbox ADD COLUMN lease_holder TEXT;
ALTER TABLE webhook_outbox ADD COLUMN lease_expires_at INTEGER;
CREATE INDEX leads_calling_lease ON leads(campaign_id, status, lease_expires_at);
`;
