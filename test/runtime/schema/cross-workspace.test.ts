import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate, PG_FOREIGN_KEY_VIOLATION } from '../../../runtime/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

// The schema itself refuses cross-workspace references (composite foreign keys on
// (workspace_id, id)), whatever application code does.
const test = suite('runtime/schema/cross-workspace');
let db: TestDatabase;
let pool: pg.Pool;

test.before(async () => {
  db = await createTestDatabase('xws');
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await migrate(pool, { lockTimeoutSeconds: 10 });
  await pool.query(`insert into organizations (id, name) values ('org_1', 'o')`);
  await pool.query(`insert into workspaces (id, organization_id, name) values ('ws_a', 'org_1', 'a'), ('ws_b', 'org_1', 'b')`);
  await pool.query(`insert into sessions (id, workspace_id) values ('ses_a', 'ws_a')`);
  await pool.query(`insert into providers (id, workspace_id, kind, type, name) values ('prv_a', 'ws_a', 'model', 'openai', 'p')`);
});
test.after(async () => {
  await pool?.end();
  await db?.drop();
});

async function refused(sql: string): Promise<string | undefined> {
  try {
    await pool.query(sql);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

test('a thread of workspace B cannot belong to a session of workspace A', async () => {
  assert.is(await refused(`insert into threads (id, workspace_id, session_id) values ('thr_x', 'ws_b', 'ses_a')`), PG_FOREIGN_KEY_VIOLATION);
  assert.is(await refused(`insert into threads (id, workspace_id, session_id) values ('thr_a', 'ws_a', 'ses_a')`), undefined);
});

test("a model of workspace B cannot use workspace A's provider", async () => {
  assert.is(await refused(`insert into models (workspace_id, key, provider_id, model, api) values ('ws_b', 'm', 'prv_a', 'x', 'openai-chat')`), PG_FOREIGN_KEY_VIOLATION);
});

test("an inbox entry of workspace B cannot target workspace A's thread or agent", async () => {
  assert.is(
    await refused(`insert into inbox_entries (id, workspace_id, thread_id, delivery, status, position, payload, agent_id) values ('ent_x', 'ws_b', 'thr_a', 'queue', 'pending', 1, '{}', 'ap_none')`),
    PG_FOREIGN_KEY_VIOLATION,
  );
});

test.run();
