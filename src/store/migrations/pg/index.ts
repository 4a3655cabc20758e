/**
 * PostgreSQL migrations, in order: entry N is version N + 1, the twin of the SQLite migration of
 * the same number (src/store/db.ts MIGRATIONS). A new migration is one file here beside its
 * SQLite twin, plus one line below; test/integration/store/migrations.test.ts checks that both
 * lists stay the same length.
 */
import { sql as m001 } from './001-initial.ts';
import { sql as m002 } from './002-chat.ts';
import { sql as m003 } from './003-call-heartbeat.ts';
import { sql as m004 } from './004-trunk-transport.ts';
import { sql as m005 } from './005-trunk-media-nat.ts';
import { sql as m006 } from './006-trunk-srtp.ts';
import { sql as m007 } from './007-webhook-secret-rotation.ts';
import { sql as m008 } from './008-call-node.ts';
import { sql as m009 } from './009-conversations-by-account.ts';
import { sql as m010 } from './010-leases.ts';

export const PG_MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010];
