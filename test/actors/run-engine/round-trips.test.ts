// The hot transactions' round trips (issue #18): the service's database connections go through
// the bench's counting proxy, which records every transaction with the number of times its
// connection waited for an answer before it could send more. Pipelined statements share a
// round trip (runtime/db/transaction.ts), so these counts are exact, whatever the machine load:
// - the inbox POST on an idle thread: ONE statement, its own transaction (no BEGIN, no COMMIT):
//   the Idempotency-Key's try-lock and record read, the thread's lock taking the position, the
//   entry, the run and its attempt, and the key's record (runtime/stores/enqueue-input.ts) —
//   one round trip, one commit;
// - the seal with its final step, when nothing waits behind it (no queued input, no webhook, no
//   seal hook or parent concerned) and the step has no steer entry to mark nor a checkpoint to
//   release: ONE statement, its own transaction (runtime/stores/seal-one.ts) — the seal with the
//   step's items and columns, the entry's finish, the thread's release and history;
//   a step committed on its own: (1) BEGIN + pointer move, (2) its rows + COMMIT;
// - no claim statement at all in role all with a free slot: the POST's run insert claims the run
//   for the local worker (attempt row included) in the same round trip, sends no NOTIFY, and
//   the slot the run frees sends no claim that would find nothing; nor a read of the thread's
//   history for the attempt (the POST's statement returned it), nor of its pending steer entries.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedTransaction, TransactionCounter } from '../../../bench/pg-transaction-counter.js';
import { startCountedDatabase, type CountedDatabase } from '../../support/counted-database.js';
import { query } from '../../support/database.js';
import { startRunFixture, until, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/round-trips');
let counted: CountedDatabase;
let counter: TransactionCounter;
let f: RunFixture;

test.before(async () => {
  counted = await startCountedDatabase('trips');
  counter = counted.counter;
  // No poll claims in the window (the fallback poll would add claims that are not the run's),
  // and no lost-worker watch (its requeue statement, every 250 ms by default, writes nothing
  // when no worker is lost, but it is a writing statement that would land in a window).
  f = await startRunFixture({ databaseUrl: counted.proxiedUrl, env: { SVC_WORKER__POLL_SECONDS: '300', SVC_WORKER__LIVENESS_SCAN_MS: '60000' } });
});
test.after(async () => {
  await f?.stop();
  await counted?.stop();
});

const having = (transactions: RecordedTransaction[], marker: string): RecordedTransaction[] => transactions.filter((t) => t.statements.some((s) => s.includes(marker)));

async function runOnce(text: string, key: string): Promise<{ runId: string; transactions: RecordedTransaction[] }> {
  counter.takeTransactions();
  const posted = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text }] } }, { 'idempotency-key': key });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const runId = posted.body.run.id as string;
  await until(() => f.client.get(`/api/v1/runs/${runId}`), (r) => r.body.status === 'completed');
  // Whatever the run's end still causes (a freed slot's claim, if any) has happened by now.
  await new Promise((r) => setTimeout(r, 300));
  return { runId, transactions: counter.takeTransactions() };
}

test('an inbox POST is one statement in one round trip and claims its run; a seal two, a step two; no claim statement', async () => {
  await runOnce('warm-up', 'trips-warm-up'); // caches, the worker's threads, the model connection
  for (const i of [1, 2]) {
    const { runId, transactions } = await runOnce(`hello ${i}`, `trips-${i}`);
    // The seal records the history's end itself (no statement measures it after the append).
    const [ends] = await query<{ history_start: number; history_end: number; message_count: number }>(counted.db.url, 'select r.history_start, r.history_end, t.message_count from runs r join threads t on t.id = r.thread_id where r.id = $1', [runId]);
    assert.equal(ends, { history_start: 2 * i, history_end: 2 * i + 2, message_count: 2 * i + 2 });
    // The final step's columns are written by the seal's own update (SealChange.ending_step):
    // the next ordinal past the run's items, the display position with it, no checkpoint kept.
    const [row] = await query<{ next_ordinal: number; display_position: string; checkpoint_key: string | null; past_last: number }>(counted.db.url, 'select r.next_ordinal, r.display_position, r.checkpoint_key, (select max(i.ordinal) + 1 from run_items i where i.run_id = r.id) as past_last from runs r where r.id = $1', [runId]);
    assert.ok(row!.past_last >= 2, JSON.stringify(row));
    assert.equal(row, { next_ordinal: row!.past_last, display_position: String(row!.past_last), checkpoint_key: null, past_last: row!.past_last });
    const posts = having(transactions, 'insert into inbox_entries');
    assert.is(posts.length, 1, 'the POST is one transaction');
    assert.is(posts[0]!.round_trips, 1, JSON.stringify(posts[0]));
    assert.is(posts[0]!.statements.length, 1, JSON.stringify(posts[0]));
    assert.ok(posts[0]!.statements[0]!.includes('insert into idempotency_keys'), 'the key is recorded by the same statement');
    assert.ok(posts[0]!.statements[0]!.includes('pg_try_advisory_xact_lock'), 'the key is try-locked by the same statement');
    const seals = having(transactions, 'sealed as (');
    assert.is(seals.length, 1, 'the run seals in one transaction');
    // ONE statement, its own transaction, one round trip (sealInOneStatement): the seal with the
    // final step's items and columns, the entry's finish, the thread's release and history.
    assert.is(seals[0]!.round_trips, 1, JSON.stringify(seals[0]));
    assert.is(seals[0]!.statements.length, 1, JSON.stringify(seals[0]!.statements));
    assert.ok(seals[0]!.statements[0]!.includes('step_items as ('), 'the items are inserted by the seal');
    assert.ok(seals[0]!.statements[0]!.includes('freed as ('), 'the thread is released by the seal');
    // A step committed on its own: BEGIN + fenced pointer move, then its rows + COMMIT.
    for (const step of having(transactions, 'with owned as').filter((t) => !t.statements.some((x) => x.includes('sealed as (')))) assert.is(step.round_trips, 2, JSON.stringify(step));
    assert.ok(posts[0]!.statements.some((s) => s.includes('insert into run_attempts')), 'the POST claims its run');
    const claims = having(transactions, "set status = 'running', attempts = r.attempts + 1");
    assert.is(claims.length, 0, `claims: ${claims.length}`);
    // The run starts on a history (the earlier runs'): the attempt takes it from the POST's
    // statement, which read it under the thread lock, instead of reading the thread again.
    assert.is(having(transactions, 'select * from threads where workspace_id = $1 and id = $2').length, 0, 'no history read for the attempt');
    assert.is(having(transactions, 'message_history::text as history').length, 0, 'no history read for the attempt (as text)');
    // Nor a read of the thread's pending steer entries: the run started on an idle thread, which
    // had none, and a steer inserted since is announced by NOTIFY (AttemptRunner.begin).
    assert.is(having(transactions, "delivery = 'steer'").length, 0, 'no steer read at the attempt start');
  }
});

test('a replayed POST answers from its record in two round trips and writes nothing', async () => {
  const count = async () => (await query<{ entries: number; next: number }>(counted.db.url, 'select (select count(*)::int from inbox_entries where thread_id = $1) as entries, (select next_position from threads where id = $1) as next', [f.threadId]))[0];
  const before = await count();
  counter.takeTransactions();
  const replay = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'hello 1' }] } }, { 'idempotency-key': 'trips-1' });
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  const transactions = counter.takeTransactions();
  // The POST's statement found the record and wrote nothing (its gate stayed closed)...
  const tried = having(transactions, 'pg_try_advisory_xact_lock');
  assert.is(tried.length, 1);
  assert.is(tried[0]!.round_trips, 1, JSON.stringify(tried[0]));
  assert.equal(await count(), before, 'no entry, no position taken');
  // ...then the record's thread history is read back as its length (api/framework/idempotency.ts storedBody).
  assert.is(having(transactions, 'jsonb_array_elements(message_history) with ordinality').length, 1, 'the history prefix is read back');
  // Nothing else but reads (the principal's lookup, when its cache entry has gone) — apart from
  // the lease-expiry statement (held_worker_locks), which the expire_leases sweep runs on its
  // own schedule whatever the POST does, and pg-boss's own bookkeeping (its scheduler sends
  // the sweeps' jobs into pgboss.job), either of which can land in this window (CI saw both).
  const scheduled = (t: RecordedTransaction) => t.statements.some((x) => x.includes('held_worker_locks')) || t.statements.every((x) => /pgboss\./i.test(x));
  for (const t of transactions) if (t !== tried[0] && !scheduled(t)) assert.ok(t.statements.every((x) => x.trimStart().startsWith('select')), JSON.stringify(t));
});

test.run();
