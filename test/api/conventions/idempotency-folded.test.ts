// The folded Idempotency-Key claim (api/framework/idempotency.ts FoldedIdempotency): routes
// whose effect is one thread-actor transaction (inbox, resume, fork) claim the key in that
// transaction — one commit per request — and keep the contract: completed twin → replay with
// Idempotent-Replayed, different request → 422, twin in flight → 409 idempotency_key_in_use,
// exactly one effect per key, also across two processes.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { startRunFixture, type RunFixture } from '../../support/run-fixture.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/conventions/idempotency-folded');
let f: RunFixture;
let second: TestService;
const REDIS = 'redis://127.0.0.1:6379';

test.before(async () => {
  // role control: runs stay accepted, so entries and runs are counted without a worker racing.
  f = await startRunFixture({ role: 'control', kvUrl: REDIS, env: { SVC_DATABASE__POOL_SIZE: '20' } });
  second = await startTestService({ databaseUrl: f.db.url, role: 'control', kvUrl: REDIS, env: { SVC_DATABASE__POOL_SIZE: '20', SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0' } });
});
test.after(async () => {
  await second?.stop();
  await f?.stop();
});

const body = (text: string) => ({ agent_id: f.agentId, payload: { content: [{ type: 'text', text }] } });
const entriesWithKey = async (key: string) => (await query<{ n: number }>(f.db.url, 'select count(*)::int as n from inbox_entries where request_key = $1', [key]))[0]!.n;
const newThread = async () => (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
const post = (base: string, threadId: string, key: string, text: string) =>
  fetch(`${base}/api/v1/threads/${threadId}/inbox`, {
    method: 'POST',
    headers: { ...f.client.headers, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body(text)),
  }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as any }));

test('a replayed inbox POST answers the stored response with Idempotent-Replayed and adds no entry', async () => {
  const thread = await newThread();
  const first = await post(f.service.url, thread, 'fold-1', 'hello');
  assert.is(first.status, 201, JSON.stringify(first.body));
  assert.is(first.replayed, null);
  const again = await post(second.url, thread, 'fold-1', 'hello');
  assert.is(again.status, 201);
  assert.is(again.replayed, 'true');
  assert.equal(again.body, first.body);
  assert.is(await entriesWithKey('fold-1'), 1);
  const positions = await query<{ position: number }>(f.db.url, 'select position from inbox_entries where thread_id = $1 order by position', [thread]);
  assert.equal(positions.map((p) => p.position), [1], 'the replay took no position');
});

test('a replay answers the first response even after its entry and run changed (the record holds the rows it was made of)', async () => {
  const thread = await newThread();
  const first = await post(f.service.url, thread, 'fold-snapshot', 'hello');
  assert.is(first.status, 201, JSON.stringify(first.body));
  const stored = (await query<{ body: string }>(f.db.url, `select response_body as body from idempotency_keys where key = 'fold-snapshot'`))[0]!.body;
  assert.ok(stored.startsWith('{"$rows"'), 'the one-statement path stored its rows');
  // The run and its entry move on after the response.
  await query(f.db.url, `update runs set status = 'cancelled', version = version + 1 where id = $1`, [first.body.run.id]);
  await query(f.db.url, `update inbox_entries set status = 'failed', version = version + 1 where id = $1`, [first.body.entry.id]);
  for (const base of [f.service.url, second.url]) {
    const again = await post(base, thread, 'fold-snapshot', 'hello');
    assert.is(again.status, 201);
    assert.is(again.replayed, 'true');
    assert.equal(again.body, first.body);
  }
});

test('a twin that commits its record after the statement\'s snapshot makes the statement fail whole; the request then answers the replay', async () => {
  const thread = await newThread();
  const source = await post(f.service.url, thread, 'fold-race-source', 'race');
  assert.is(source.status, 201);
  // The twin: a record for the key, inserted by a transaction left open (it takes no advisory
  // lock, as a twin between its lock's release and the statement's lock would have committed).
  const holder = new pg.Client({ connectionString: f.db.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(
      `insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, status_code, response_body, expires_at)
       select workspace_id, principal_id, method, route, 'fold-race', fingerprint, state, status_code, response_body, expires_at from idempotency_keys where key = 'fold-race-source'`,
    );
    // The statement sees no record (not committed), takes the lock and the thread, then waits on the key's primary key.
    const racing = post(f.service.url, thread, 'fold-race', 'race');
    await new Promise((r) => setTimeout(r, 400));
    await holder.query('commit');
    const answered = await racing;
    assert.is(answered.status, 201, JSON.stringify(answered.body));
    assert.is(answered.replayed, 'true');
    assert.equal(answered.body, source.body);
  } finally {
    await holder.end();
  }
  assert.is(await entriesWithKey('fold-race'), 0, 'the statement\'s effect rolled back with it');
  const positions = await query<{ position: number }>(f.db.url, 'select position from inbox_entries where thread_id = $1 order by position', [thread]);
  assert.equal(positions.map((p) => p.position), [1]);
  const next = await query<{ next_position: number }>(f.db.url, 'select next_position from threads where id = $1', [thread]);
  assert.is(next[0]!.next_position, 2, 'no position taken');
});

test('the same key with a different body is 422 idempotency_key_reused and adds nothing', async () => {
  const thread = await newThread();
  assert.is((await post(f.service.url, thread, 'fold-2', 'one')).status, 201);
  const other = await post(f.service.url, thread, 'fold-2', 'two');
  assert.is(other.status, 422);
  assert.is(other.body.error.code, 'idempotency_key_reused');
  assert.is(await entriesWithKey('fold-2'), 1);
});

test('a twin whose effect transaction is open (holding the key) gets 409 idempotency_key_in_use at once; after it rolls back the key is free', async () => {
  const thread = await newThread();
  const principal = (await query<{ principal_id: string; workspace_id: string }>(f.db.url, `select principal_id, workspace_id from idempotency_keys where key = 'fold-1'`))[0]!;
  const holder = new pg.Client({ connectionString: f.db.url });
  await holder.connect();
  try {
    await holder.query('begin');
    const lockKey = ['idempotency', principal.workspace_id, principal.principal_id, 'POST', '/api/v1/threads/{thread_id}/inbox', 'fold-3'].join('\n');
    await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
    const started = Date.now();
    const busy = await post(f.service.url, thread, 'fold-3', 'held');
    assert.is(busy.status, 409);
    assert.is(busy.body.error.code, 'idempotency_key_in_use');
    assert.ok(Date.now() - started < 2_000, 'refused at once, not after waiting for the lock');
    assert.is(await entriesWithKey('fold-3'), 0);
    await holder.query('rollback');
  } finally {
    await holder.end();
  }
  const free = await post(f.service.url, thread, 'fold-3', 'held');
  assert.is(free.status, 201);
  assert.is(free.replayed, null);
});

test('60 concurrent identical POSTs over two processes and many threads\' worth of load create one entry; the others replay it or get 409', async () => {
  const thread = await newThread();
  const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => post(i % 2 === 0 ? f.service.url : second.url, thread, 'fold-concurrent', 'once')));
  assert.is(await entriesWithKey('fold-concurrent'), 1);
  const created = responses.filter((r) => r.status === 201 && r.replayed === null);
  assert.is(created.length, 1, JSON.stringify(responses.map((r) => [r.status, r.replayed])));
  for (const r of responses) {
    if (r.status === 201) assert.equal(r.body, created[0]!.body);
    else {
      assert.is(r.status, 409, JSON.stringify(r.body));
      assert.is(r.body.error.code, 'idempotency_key_in_use');
    }
  }
  const positions = await query<{ position: number }>(f.db.url, 'select position from inbox_entries where thread_id = $1 order by position', [thread]);
  assert.equal(positions.map((p) => p.position), [1], 'positions stay gap-free: refused twins took none');
});

test('an in-flight claim row of the previous release answers 409; once stale it is taken over', async () => {
  const thread = await newThread();
  // A claim as the previous release's autocommit claim leaves it while its effect runs: made
  // from a real request's record (same fingerprint), its effect removed (never committed).
  assert.is((await post(f.service.url, thread, 'fold-old', 'hello')).status, 201);
  await query(f.db.url, `delete from runs where source_entry_id in (select id from inbox_entries where request_key = 'fold-old')`).catch(() => undefined);
  await query(f.db.url, `update idempotency_keys set state = 'in_flight', locked_until = now() + interval '1 minute', claim_token = 'old-release', status_code = null, response_body = null where key = 'fold-old'`);
  const live = await post(f.service.url, thread, 'fold-old', 'hello');
  assert.is(live.status, 409);
  assert.is(live.body.error.code, 'idempotency_key_in_use');
  await query(f.db.url, `update idempotency_keys set locked_until = now() - interval '1 second' where key = 'fold-old'`);
  const stale = await post(f.service.url, thread, 'fold-old', 'hello');
  assert.is(stale.status, 201, JSON.stringify(stale.body));
  assert.is(stale.replayed, null);
  const row = await query<{ state: string }>(f.db.url, `select state from idempotency_keys where key = 'fold-old'`);
  assert.is(row[0]!.state, 'completed');
});

test('an inbox POST costs one writing commit: no claim commit before the actor transaction', async () => {
  const thread = await newThread();
  const before = await query<{ n: number }>(f.db.url, `select count(*)::int as n from idempotency_keys where state = 'in_flight'`);
  const r = await post(f.service.url, thread, 'fold-one-commit', 'hello');
  assert.is(r.status, 201);
  // The record is written completed (never in_flight) and in the same transaction as the entry:
  // both rows carry the same transaction id.
  const xids = await query<{ entry_xid: string; key_xid: string; state: string }>(
    f.db.url,
    `select e.xmin::text as entry_xid, k.xmin::text as key_xid, k.state from inbox_entries e, idempotency_keys k where e.request_key = 'fold-one-commit' and k.key = 'fold-one-commit'`,
  );
  assert.is(xids[0]!.state, 'completed');
  assert.is(xids[0]!.entry_xid, xids[0]!.key_xid);
  const after = await query<{ n: number }>(f.db.url, `select count(*)::int as n from idempotency_keys where state = 'in_flight'`);
  assert.is(after[0]!.n, before[0]!.n);
});

test('a long thread\'s history is not stored again in the record; a replay after the history grew answers the history the first response carried', async () => {
  const thread = await newThread();
  const history = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} ${'x'.repeat(200)}` }));
  await query(f.db.url, 'update threads set message_history = $2::jsonb, message_count = 40 where id = $1', [thread, JSON.stringify(history)]);
  const first = await post(f.service.url, thread, 'fold-history', 'hello');
  assert.is(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.thread.message_history, history);
  const stored = (await query<{ body: string }>(f.db.url, `select response_body::text as body from idempotency_keys where key = 'fold-history'`))[0]!.body;
  assert.ok(stored.length < 4_000, `the record holds the prefix length, not the history (${stored.length} characters)`);
  assert.ok(!stored.includes('message 39'));
  // A run appends at its seal: the history grows after the first response.
  await query(f.db.url, `update threads set message_history = message_history || '[{"role":"user","content":"later"}]'::jsonb, message_count = 41 where id = $1`, [thread]);
  for (const base of [f.service.url, second.url]) {
    const again = await post(base, thread, 'fold-history', 'hello');
    assert.is(again.status, 201);
    assert.is(again.replayed, 'true');
    assert.equal(again.body, first.body);
  }
});

test.run();
