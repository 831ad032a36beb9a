// GET /runs/{id}/items against display-page packing (actors/runs/read-items.ts committedRange):
// packing swaps a run's oldest item rows for a page pointer in one transaction; a read of the
// committed items must find every item whenever that swap commits relative to its statements.
// The swap is made to commit between the read's statements: the test holds the item rows'
// table locked, waits until the read's statement is blocked on that lock, swaps in the same
// transaction and commits. Reading the pages first (as before this test) missed the page.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { deleteItemRows, encodePage, insertDisplayPage, listItemRows, pageObjectKey, PAGE_ITEMS, sha256Hex } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/runs/read-items-packing');
let f: RunFixture;
// One page is packed when the run has PAGE_ITEMS committed items; the rest stay rows.
const CALLS = 40;

test.before(async () => {
  let calls = 0;
  f = await startRunFixture({
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
    script: () =>
      ++calls === 1
        ? { type: 'tool_calls', calls: Array.from({ length: CALLS }, (_, i) => ({ id: `c${i}`, name: 'echo', arguments: JSON.stringify({ text: `item ${i}` }) })) }
        : { type: 'text', text: 'done' },
  });
});
test.after(async () => {
  await f?.stop();
});

test('a page packed between the read of the rows and the read of the pages loses no item', async () => {
  const run = await waitForRun(f, (await send(f, 'many items')).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const total = 1 + CALLS * 2 + 1;
  const pages = () => query<{ first_ordinal: number }>(f.db.url, 'select first_ordinal from run_display_pages where run_id = $1', [run.id]);
  await until(pages, (p) => p.length === 1);
  const lock = new pg.Client({ connectionString: f.db.url });
  await lock.connect();
  try {
    await lock.query('begin');
    await lock.query('lock table run_items in access exclusive mode');
    const reading = f.client.get(`/api/v1/runs/${run.id}/items?after=0&limit=500`);
    // The read's statement on run_items waits for the lock.
    await until(
      () => query<{ n: number }>(f.db.url, "select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'run_items' and not l.granted"),
      (r) => r[0]!.n > 0,
      5_000,
    );
    // Pack the remaining rows (PAGE_ITEMS + 1 .. total) into a second page, as packDisplayPages does.
    const rows = await listItemRows(lock, run.id, { from: PAGE_ITEMS + 1, to: total });
    assert.is(rows.length, total - PAGE_ITEMS);
    const bytes = await encodePage(rows);
    const digest = sha256Hex(bytes);
    const key = pageObjectKey(run.id, digest);
    await f.service.services.objects.put(key, bytes, { contentType: 'application/x-msgpack' });
    await insertDisplayPage(lock, { run_id: run.id, first_ordinal: PAGE_ITEMS + 1, last_ordinal: total, object_key: key, digest, size_bytes: bytes.length, item_count: rows.length });
    assert.is(await deleteItemRows(lock, run.id, { from: PAGE_ITEMS + 1, to: total }), rows.length);
    await lock.query('commit');
    const page = await reading;
    assert.is(page.status, 200, JSON.stringify(page.body));
    const items = page.body.items as Array<{ ordinal: number }>;
    assert.equal(items.map((i) => i.ordinal), Array.from({ length: total }, (_, i) => i + 1));
    assert.is(page.body.complete, true);
  } finally {
    await lock.end();
  }
});

test.run();
