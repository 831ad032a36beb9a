import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/inbox-ordering');
let f: RunFixture;

test.before(async () => {
  f = await startRunFixture({ env: { SVC_DATABASE__POOL_SIZE: '20', SVC_WORKER__SLOTS: '8' } });
});
test.after(async () => {
  await f?.stop();
});

test('50 concurrent inputs to one thread get positions 1..50 and run strictly one after another', async () => {
  const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => send(f, `message ${i}`)));
  for (const r of responses) assert.is(r.status, 201, JSON.stringify(r.body));
  const positions = responses.map((r) => r.body.entry.position).sort((a: number, b: number) => a - b);
  assert.equal(positions, Array.from({ length: 50 }, (_, i) => i + 1));
  assert.is(responses.filter((r) => r.body.run !== null).length, 1, 'only the first input found the thread idle');
  await until(
    () => query<{ n: number }>(f.db.url, `select count(*)::int as n from runs where thread_id = $1 and status = 'completed'`, [f.threadId]),
    (rows) => rows[0]!.n === 50,
    60_000,
  );
  const runs = await query<{ position: number; started_at: Date; sealed_at: Date; created_at: Date }>(
    f.db.url,
    `select e.position, r.created_at, r.started_at, r.sealed_at from runs r join inbox_entries e on e.id = r.source_entry_id where r.thread_id = $1 order by e.position`,
    [f.threadId],
  );
  assert.is(runs.length, 50);
  for (let i = 1; i < runs.length; i++) {
    assert.ok(runs[i]!.created_at >= runs[i - 1]!.sealed_at, `run of position ${runs[i]!.position} was created before the previous one sealed`);
  }
  const entries = await query<{ status: string }>(f.db.url, `select distinct status from inbox_entries where thread_id = $1`, [f.threadId]);
  assert.equal(entries, [{ status: 'completed' }]);
});

test.run();
