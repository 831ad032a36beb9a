import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate } from '../../../runtime/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

// Migrations 0019 and 0020: the values every run rewrites (a thread's message_history at each seal, the
// inline checkpoint at each step) are compressed with lz4 where the server has it, pglz where
// it does not — and the migration applies either way.
const test = suite('runtime/schema/toast-compression');
let db: TestDatabase;
let pool: pg.Pool;

test.before(async () => {
  db = await createTestDatabase('toast');
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await migrate(pool, { lockTimeoutSeconds: 10 });
});
test.after(async () => {
  await pool?.end();
  await db?.drop();
});

test('message_history and the inline checkpoint use lz4 when the server supports it, else the default', async () => {
  const { rows: support } = await pool.query<{ lz4: boolean }>(`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`);
  const expected = support[0]?.lz4 ? 'l' : '';
  const { rows } = await pool.query<{ relname: string; attname: string; attcompression: string }>(
    `select c.relname, a.attname, a.attcompression::text as attcompression from pg_attribute a join pg_class c on c.oid = a.attrelid
      where (c.relname, a.attname) in (('threads', 'message_history'), ('run_checkpoints', 'state')) order by c.relname`,
  );
  assert.equal(rows.map((r) => [r.relname, r.attname, r.attcompression]), [['run_checkpoints', 'state', expected], ['threads', 'message_history', expected]]);
});

test('migration 0020: the large values of every request and run use lz4 too where the server has it', async () => {
  const { rows: support } = await pool.query<{ lz4: boolean }>(`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`);
  const expected = support[0]?.lz4 ? 'l' : '';
  const columns = [['idempotency_keys', 'response_body'], ['inbox_entries', 'payload'], ['outbox', 'payload'], ['run_items', 'content'], ['runs', 'config'], ['runs', 'input'], ['runs', 'output']];
  const { rows } = await pool.query<{ relname: string; attname: string; attcompression: string }>(
    `select c.relname, a.attname, a.attcompression::text as attcompression from pg_attribute a join pg_class c on c.oid = a.attrelid
      where (c.relname || '.' || a.attname) = any($1::text[]) order by c.relname, a.attname`,
    [columns.map(([t, c]) => `${t}.${c}`)],
  );
  assert.equal(rows.map((r) => [r.relname, r.attname, r.attcompression]), columns.map(([t, c]) => [t, c, expected]));
});

test('a long history compressed this way reads back whole', async () => {
  await pool.query(`insert into organizations (id, name) values ('org_1', 'o')`);
  await pool.query(`insert into workspaces (id, organization_id, name) values ('ws_a', 'org_1', 'a')`);
  await pool.query(`insert into sessions (id, workspace_id) values ('ses_a', 'ws_a')`);
  await pool.query(`insert into threads (id, workspace_id, session_id) values ('thr_a', 'ws_a', 'ses_a')`);
  const messages = Array.from({ length: 400 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `message ${i} `.repeat(20) }] }));
  for (let i = 0; i < messages.length; i += 100) {
    await pool.query(`update threads set message_history = message_history || $1::jsonb where id = 'thr_a'`, [JSON.stringify(messages.slice(i, i + 100))]);
  }
  const { rows } = await pool.query<{ history: unknown[]; count: number; stored: number }>(`select message_history as history, message_count as count, pg_column_size(message_history) as stored from threads where id = 'thr_a'`);
  assert.equal(rows[0]!.history, messages);
  assert.is(rows[0]!.count, 400);
  assert.ok(rows[0]!.stored < JSON.stringify(messages).length / 2, `stored compressed (${rows[0]!.stored} bytes)`);
});

test.run();
