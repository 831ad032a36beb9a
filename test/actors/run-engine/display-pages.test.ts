import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { deleteItemRows, encodePage, insertDisplayPage, listItemRows, pageObjectKey, PAGE_ITEMS, sha256Hex } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/display-pages');
let f: RunFixture;
const CALLS = 40;
const TOTAL = 1 + CALLS * 2 + 1;
/** The first test's run: one page packed (items 1..PAGE_ITEMS), the rest rows. */
let packedRunId = '';

test.before(async () => {
  let calls = 0;
  f = await startRunFixture({
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } }, retries: { tools: 5 } },
    script: () =>
      ++calls === 1
        ? { type: 'tool_calls', calls: Array.from({ length: CALLS }, (_, i) => ({ id: `call_${i}`, name: 'echo', arguments: JSON.stringify({ text: `item ${i}` }) })) }
        : { type: 'text', text: 'all echoed' },
  });
});
test.after(async () => {
  await f?.stop();
});

test('committed items are packed into compressed display pages and read back by ordinal across page boundaries', async () => {
  const run = await waitForRun(f, (await send(f, 'many items')).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  packedRunId = run.id;
  const total = TOTAL;
  const pages = await until(
    () => query<{ first_ordinal: number; last_ordinal: number; item_count: number; digest: string; size_bytes: number }>(f.db.url, 'select * from run_display_pages where run_id = $1 order by first_ordinal', [run.id]),
    (rows) => rows.length >= 1,
  );
  assert.is(pages[0]!.first_ordinal, 1);
  assert.is(pages[0]!.item_count, 64);
  assert.match(pages[0]!.digest, /^[0-9a-f]{64}$/);
  const rows = await query<{ n: number; min: number }>(f.db.url, 'select count(*)::int as n, min(ordinal) as min from run_items where run_id = $1', [run.id]);
  assert.is(rows[0]!.n + pages.reduce((a, p) => a + p.item_count, 0), total, 'every item is either paged or a row, never both');
  const all = (await f.client.get(`/api/v1/runs/${run.id}/items?after=0&limit=500`)).body.items as Array<{ ordinal: number; kind: string; content: any }>;
  assert.equal(all.map((i) => i.ordinal), Array.from({ length: total }, (_, i) => i + 1));
  assert.is(all[0]!.kind, 'user_message');
  assert.is(all[total - 1]!.kind, 'text_message');
  const across = (await f.client.get(`/api/v1/runs/${run.id}/items?after=60&limit=8`)).body.items as Array<{ ordinal: number }>;
  assert.equal(across.map((i) => i.ordinal), [61, 62, 63, 64, 65, 66, 67, 68]);
  const before = (await f.client.get(`/api/v1/runs/${run.id}/items?before=66&limit=3`)).body.items as Array<{ ordinal: number }>;
  assert.equal(before.map((i) => i.ordinal), [63, 64, 65]);
  const echoed = all.filter((i) => i.kind === 'tool_result').map((i) => JSON.stringify(i.content));
  assert.is(echoed.length, CALLS);
  assert.ok(echoed.every((text, i) => text.includes(`item ${i}`)), 'item content survives the page round trip');
});

// GET /runs/{id}/items against packing (actors/runs/read-items.ts committedRange): packing swaps a
// run's oldest rows for a page pointer in one transaction; a read of the committed items must
// find every item whenever that swap commits relative to its statements. Here the swap commits
// between them: the test holds run_items locked, waits until the read's statement is blocked on
// it, swaps in the same transaction and commits. Reading the pages first missed the page.
test('a page packed between the read of the rows and the read of the pages loses no item', async () => {
  assert.ok(packedRunId, 'the first test packed a run');
  const [{ n: paged } = { n: 0 }] = await query<{ n: number }>(f.db.url, 'select count(*)::int as n from run_display_pages where run_id = $1', [packedRunId]);
  assert.is(paged, 1, 'one page packed, the rest rows');
  const lock = new pg.Client({ connectionString: f.db.url });
  await lock.connect();
  try {
    await lock.query('begin');
    await lock.query('lock table run_items in access exclusive mode');
    const reading = f.client.get(`/api/v1/runs/${packedRunId}/items?after=0&limit=500`);
    await until(
      () => query<{ n: number }>(f.db.url, "select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'run_items' and not l.granted"),
      (r) => r[0]!.n > 0,
      5_000,
    );
    // Pack the remaining rows (PAGE_ITEMS + 1 .. TOTAL) into a second page, as packDisplayPages does.
    const rows = await listItemRows(lock, packedRunId, { from: PAGE_ITEMS + 1, to: TOTAL });
    assert.is(rows.length, TOTAL - PAGE_ITEMS);
    const bytes = await encodePage(rows);
    const digest = sha256Hex(bytes);
    const key = pageObjectKey(packedRunId, digest);
    await f.service.services.objects.put(key, bytes, { contentType: 'application/x-msgpack' });
    await insertDisplayPage(lock, { run_id: packedRunId, first_ordinal: PAGE_ITEMS + 1, last_ordinal: TOTAL, object_key: key, digest, size_bytes: bytes.length, item_count: rows.length });
    assert.is(await deleteItemRows(lock, packedRunId, { from: PAGE_ITEMS + 1, to: TOTAL }), rows.length);
    await lock.query('commit');
    const page = await reading;
    assert.is(page.status, 200, JSON.stringify(page.body));
    const items = page.body.items as Array<{ ordinal: number }>;
    assert.equal(items.map((i) => i.ordinal), Array.from({ length: TOTAL }, (_, i) => i + 1));
    assert.is(page.body.complete, true);
  } finally {
    await lock.end();
  }
});

test.run();
