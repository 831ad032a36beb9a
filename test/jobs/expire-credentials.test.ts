import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expireCredentials } from '../../jobs/index.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { seedOrganization } from '../support/identity.js';
import { openJobHarness, type JobHarness } from './job-harness.js';

const test = suite('jobs/expire-credentials');
let db: TestDatabase;
let harness: JobHarness;

test.before(async () => {
  db = await createTestDatabase('expcred');
  harness = await openJobHarness(db.url);
});
test.after(async () => {
  await harness?.close();
  await db?.drop();
});

test('deletes expired or revoked sessions, used or expired mail links, expired unaccepted invitations and idempotency records', async () => {
  const { workspace_id, admin } = await seedOrganization(db.url);
  const ids = async (table: string) => (await query<{ id: string }>(db.url, `select id from ${table} order by id`)).map((r) => r.id);
  await query(
    db.url,
    `insert into login_sessions (id, user_id, token_hash, expires_at, revoked_at) values
       ('ls_live', $1, 'a', now() + interval '1 hour', null),
       ('ls_expired', $1, 'b', now() - interval '1 second', null),
       ('ls_revoked', $1, 'c', now() + interval '1 hour', now())`,
    [admin.id],
  );
  await query(
    db.url,
    `insert into mail_links (id, purpose, user_id, token_hash, expires_at, used_at) values
       ('ml_live', 'password_reset', $1, 'a', now() + interval '1 hour', null),
       ('ml_expired', 'password_reset', $1, 'b', now() - interval '1 second', null),
       ('ml_used', 'password_reset', $1, 'c', now() + interval '1 hour', now())`,
    [admin.id],
  );
  await query(
    db.url,
    `insert into invitations (id, workspace_id, email, role, token_hash, expires_at, accepted_at, accepted_by_id) values
       ('inv_live', $1, 'a@example.com', 'member', 'a', now() + interval '1 hour', null, null),
       ('inv_expired', $1, 'b@example.com', 'member', 'b', now() - interval '1 second', null, null),
       ('inv_accepted', $1, 'c@example.com', 'member', 'c', now() - interval '1 second', now() - interval '1 hour', $2)`,
    [workspace_id, admin.id],
  );
  await query(
    db.url,
    `insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, expires_at) values
       ($1, 'p', 'POST', '/r', 'old', 'f', 'completed', now() - interval '1 second'),
       ($1, 'p', 'POST', '/r', 'new', 'f', 'completed', now() + interval '1 day')`,
    [workspace_id],
  );
  const summary = await expireCredentials(harness.context);
  assert.equal(summary, { login_sessions: 2, mail_links: 2, invitations: 1, idempotency_keys: 1 });
  assert.equal(await ids('login_sessions'), ['ls_live']);
  assert.equal(await ids('mail_links'), ['ml_live']);
  assert.equal(await ids('invitations'), ['inv_accepted', 'inv_live']);
  assert.equal((await query<{ key: string }>(db.url, `select key from idempotency_keys`)).map((r) => r.key), ['new']);
  assert.equal(await expireCredentials(harness.context), { login_sessions: 0, mail_links: 0, invitations: 0, idempotency_keys: 0 }, 'a second pass finds nothing');
});

test.run();
