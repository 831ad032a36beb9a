// HistoryPrefixes (runtime/cache/history-prefixes.ts) and the reads that use them: a process
// holds the text of a thread history's beginning (true forever: a history only grows at its
// end) and reads only the messages after it. The marker prefixes below differ from the
// database's on purpose: where a response shows them, the prefix was used and not re-read.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { getThreadHistoryText, historyAfter, HistoryPrefixes, JsonArrayText } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { startRunFixture, type RunFixture } from '../../support/run-fixture.js';

const test = suite('runtime/cache/history-prefixes');
let f: RunFixture;
let pool: pg.Pool;

test.before(async () => {
  // role control: no run executes, so nothing appends to the histories set here.
  f = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
  pool = new pg.Pool({ connectionString: f.db.url, max: 2 });
});
test.after(async () => {
  await pool?.end();
  await f?.stop();
});

const text = (messages: unknown[]): JsonArrayText => new JsonArrayText(JSON.stringify(messages), messages.length);

test('keeps the longest prefix per thread, refuses empty and oversized ones, drops the least recently used beyond its bound', () => {
  const cache = new HistoryPrefixes(100);
  cache.remember('t1', JsonArrayText.EMPTY);
  assert.is(cache.size, 0);
  cache.remember('t1', text([{ a: 1 }, { a: 2 }]));
  cache.remember('t1', text([{ a: 1 }]));
  assert.is(cache.get('t1')?.count, 2, 'a shorter prefix does not replace a longer one');
  cache.remember('t2', text(['x'.repeat(40)]));
  cache.remember('t3', text(['y'.repeat(40)]));
  assert.is(cache.get('t1'), undefined, 'the oldest went when the bound was passed');
  assert.ok(cache.chars <= 100);
  cache.get('t2'); // t2 is now the most recent: t3 goes next
  cache.remember('t4', text(['z'.repeat(40)]));
  assert.ok(cache.get('t2') && !cache.get('t3') && cache.get('t4'));
  cache.remember('t5', text(['w'.repeat(200)]));
  assert.is(cache.get('t5'), undefined, 'larger than the bound: not held');
});

test('historyAfter joins a prefix and what followed it, and falls back to the whole history read', () => {
  const prefix = { count: 2, text: '[{"m": 1}, {"m": 2}]' };
  assert.equal(historyAfter(prefix, '[{"m": 3}]', 3).value(), [{ m: 1 }, { m: 2 }, { m: 3 }]);
  assert.is(historyAfter(prefix, null, 2).text, prefix.text);
  assert.equal(historyAfter(undefined, '[{"m": 9}]', 1).value(), [{ m: 9 }]);
  assert.equal(historyAfter({ count: 5, text: '[1, 2, 3, 4, 5]' }, '[{"m": 9}]', 1).value(), [{ m: 9 }], 'a prefix longer than the history is not used');
  assert.is(historyAfter(prefix, null, 0), JsonArrayText.EMPTY);
});

test('getThreadHistoryText reads only what follows the prefix held, nothing when the prefix is the whole history', async () => {
  const workspace = (await query<{ workspace_id: string }>(f.db.url, 'select workspace_id from threads where id = $1', [f.threadId]))[0]!.workspace_id;
  await query(f.db.url, `update threads set message_history = '[{"m": "db 1"}, {"m": "db 2"}, {"m": "db 3"}]'::jsonb where id = $1`, [f.threadId]);
  const held = { count: 2, text: '[{"m": "held 1"}, {"m": "held 2"}]' };
  assert.equal((await getThreadHistoryText(pool, workspace, f.threadId, held))?.value(), [{ m: 'held 1' }, { m: 'held 2' }, { m: 'db 3' }]);
  const whole = { count: 3, text: '[{"m": "held 1"}, {"m": "held 2"}, {"m": "held 3"}]' };
  assert.is((await getThreadHistoryText(pool, workspace, f.threadId, whole))?.text, whole.text);
  assert.equal((await getThreadHistoryText(pool, workspace, f.threadId))?.value(), [{ m: 'db 1' }, { m: 'db 2' }, { m: 'db 3' }]);
  assert.is((await getThreadHistoryText(pool, workspace, f.threadId))?.length, 3);
});

test('an inbox POST takes the prefix the process read before and reads only the messages after it', async () => {
  const thread = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
  await query(f.db.url, `update threads set message_history = '[{"m": "one"}, {"m": "two"}]'::jsonb where id = $1`, [thread]);
  const post = (key: string) => f.client.post(`/api/v1/threads/${thread}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text: key }] } }, { 'idempotency-key': key });
  const first = await post('prefix-1');
  assert.is(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.thread.message_history, [{ m: 'one' }, { m: 'two' }]);
  // Breaks the append-only rule on purpose (rewrites the first message) and appends one: the
  // process's prefix is still "one", so the answer shows it, with the appended message read.
  await query(f.db.url, `update threads set message_history = '[{"m": "rewritten"}, {"m": "two"}, {"m": "three"}]'::jsonb where id = $1`, [thread]);
  const second = await post('prefix-2');
  assert.is(second.status, 201);
  assert.equal(second.body.thread.message_history, [{ m: 'one' }, { m: 'two' }, { m: 'three' }]);
  // GET takes the same prefix (three messages now) and reads what follows: nothing new, or the
  // message appended next.
  assert.equal((await f.client.get(`/api/v1/threads/${thread}`)).body.message_history, [{ m: 'one' }, { m: 'two' }, { m: 'three' }]);
  await query(f.db.url, `update threads set message_history = message_history || '[{"m": "four"}]'::jsonb where id = $1`, [thread]);
  assert.equal((await f.client.get(`/api/v1/threads/${thread}`)).body.message_history, [{ m: 'one' }, { m: 'two' }, { m: 'three' }, { m: 'four' }]);
});

test('GET of a thread not read before answers the whole history from the database, and keeps its text', async () => {
  const thread = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
  await query(f.db.url, `update threads set message_history = '[{"m": "a"}, {"m": "b"}]'::jsonb where id = $1`, [thread]);
  assert.equal((await f.client.get(`/api/v1/threads/${thread}`)).body.message_history, [{ m: 'a' }, { m: 'b' }]);
  await query(f.db.url, `update threads set message_history = '[{"m": "changed"}, {"m": "b"}]'::jsonb where id = $1`, [thread]);
  assert.equal((await f.client.get(`/api/v1/threads/${thread}`)).body.message_history, [{ m: 'a' }, { m: 'b' }], 'the prefix read first is served');
});

test.run();
