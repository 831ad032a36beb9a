// The thread actor's statements (runtime/stores/threads.ts) read a thread's state without its
// message_history; message_count, kept by the trigger of migration 0017, is the history's length
// whoever writes the history.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendThreadHistory, getThread, ID_PREFIX, insertThread, lockThread, lockThreadTakingPosition, newId, setThreadRuns, withTransaction } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { startRunFixture, type RunFixture } from '../../support/run-fixture.js';

const test = suite('runtime/stores/threads');
let f: RunFixture;
let pool: pg.Pool;
let workspaceId: string;

test.before(async () => {
  f = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
  pool = new pg.Pool({ connectionString: f.db.url, max: 2 });
  workspaceId = (await f.client.get(`/api/v1/threads/${f.threadId}`)).body.workspace_id as string;
});
test.after(async () => {
  await pool?.end();
  await f?.stop();
});

const message = (i: number) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i}` });

test('lock and update statements return message_count and no message_history; the count follows every write of the history', async () => {
  const id = newId(ID_PREFIX.thread);
  const inserted = await insertThread(pool, { id, workspace_id: workspaceId, session_id: f.sessionId, labels: {}, message_history: [message(0), message(1), message(2)] });
  assert.not.ok('message_history' in inserted);
  assert.is(inserted.message_count, 3);
  await withTransaction(pool, async (tx) => {
    const locked = await lockThreadTakingPosition(tx, workspaceId, id);
    assert.ok(locked);
    assert.not.ok('message_history' in locked.thread);
    assert.is(locked.position, 1);
    await appendThreadHistory(tx, id, [message(3), message(4)]);
    const again = (await lockThread(tx, workspaceId, id))!;
    assert.not.ok('message_history' in again);
    assert.is(again.message_count, 5);
    const after = await setThreadRuns(tx, id, null);
    assert.not.ok('message_history' in after);
    assert.is(after.message_count, 5);
  });
  const whole = (await getThread(pool, workspaceId, id))!;
  assert.is(whole.message_history.length, 5);
  assert.equal(whole.message_history.map((m) => m.content), [0, 1, 2, 3, 4].map((i) => `message ${i}`));
  // A write that bypasses the store (an operator's repair, the bench's seeding) moves the count too.
  await query(f.db.url, `update threads set message_history = '[]'::jsonb where id = $1`, [id]);
  assert.equal(await query(f.db.url, `select message_count from threads where id = $1`, [id]), [{ message_count: 0 }]);
});

test.run();
