import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/display-pages');
let f: RunFixture;
const CALLS = 40;

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
  const total = 1 + CALLS * 2 + 1;
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

test.run();
