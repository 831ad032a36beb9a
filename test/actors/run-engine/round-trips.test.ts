// The hot transactions' round trips (issue #18): the service's database connections go through
// the bench's counting proxy, which records every transaction with the number of times its
// connection waited for an answer before it could send more. Pipelined statements share a
// round trip (runtime/db/transaction.ts), so these counts are exact, whatever the machine load:
// - the inbox POST on an idle thread: (1) BEGIN + the Idempotency-Key try-lock and record read +
//   one statement that locks the thread taking the position and inserts the entry, the run and
//   its attempt (runtime/stores/enqueue-input.ts), (2) the key's record + COMMIT — two round
//   trips, one commit, five statements and the COMMIT;
// - the seal (with its final step when that commits with it): (1) BEGIN + thread lock + fenced
//   pointer move, (2) the step's rows, the seal, entry, history, thread and the next-entry read,
//   (3) COMMIT; a step committed on its own: (1) BEGIN + pointer move, (2) its rows + COMMIT;
// - no claim statement at all in role all with a free slot: the POST's run insert claims the run
//   for the local worker (attempt row included) in the same round trip, sends no NOTIFY, and
//   the slot the run frees sends no claim that would find nothing; nor a read of the thread's
//   history for the attempt (the POST's statement returned it).
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
  // No poll claims in the window (the fallback poll would add claims that are not the run's).
  f = await startRunFixture({ databaseUrl: counted.proxiedUrl, env: { SVC_WORKER__POLL_SECONDS: '300' } });
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

test('an inbox POST is two round trips and one commit and claims its run; a seal three, a step two; no claim statement', async () => {
  await runOnce('warm-up', 'trips-warm-up'); // caches, the worker's threads, the model connection
  for (const i of [1, 2]) {
    const { runId, transactions } = await runOnce(`hello ${i}`, `trips-${i}`);
    // The seal records the history's end itself (no statement measures it after the append).
    const [ends] = await query<{ history_start: number; history_end: number; message_count: number }>(counted.db.url, 'select r.history_start, r.history_end, t.message_count from runs r join threads t on t.id = r.thread_id where r.id = $1', [runId]);
    assert.equal(ends, { history_start: 2 * i, history_end: 2 * i + 2, message_count: 2 * i + 2 });
    const posts = having(transactions, 'insert into inbox_entries');
    assert.is(posts.length, 1, 'the POST is one transaction');
    assert.is(posts[0]!.round_trips, 2, JSON.stringify(posts[0]));
    assert.is(posts[0]!.statements.length, 6, JSON.stringify(posts[0]));
    assert.is(posts[0]!.statements.filter((s) => s === 'commit').length, 1);
    // No previous-release claim was seen under the lock: nothing to delete before the record.
    assert.not.ok(posts[0]!.statements.some((s) => s.startsWith('delete from idempotency_keys')), 'no stale-claim delete');
    const seals = having(transactions, 'with sealed as');
    assert.is(seals.length, 1, 'the run seals in one transaction');
    // BEGIN + thread lock + (the final step's fenced pointer move, when it commits with the
    // seal), then the seal and what it implies, then COMMIT.
    assert.is(seals[0]!.round_trips, 3, JSON.stringify(seals[0]));
    // A step committed on its own: BEGIN + fenced pointer move, then its rows + COMMIT.
    for (const step of having(transactions, 'with owned as').filter((t) => !t.statements.some((x) => x.includes('with sealed as')))) assert.is(step.round_trips, 2, JSON.stringify(step));
    assert.ok(posts[0]!.statements.some((s) => s.includes('insert into run_attempts')), 'the POST claims its run');
    const claims = having(transactions, "set status = 'running', attempts = r.attempts + 1");
    assert.is(claims.length, 0, `claims: ${claims.length}`);
    // The run starts on a history (the earlier runs'): the attempt takes it from the POST's
    // statement, which read it under the thread lock, instead of reading the thread again.
    assert.is(having(transactions, 'select * from threads where workspace_id = $1 and id = $2').length, 0, 'no history read for the attempt');
    assert.is(having(transactions, 'message_history::text as history').length, 0, 'no history read for the attempt (as text)');
  }
});

test('a replayed POST answers from its record in one round trip and writes nothing', async () => {
  counter.takeTransactions();
  const replay = await f.client.post(`/api/v1/threads/${f.threadId}/inbox`, { agent_id: f.agentId, payload: { content: [{ type: 'text', text: 'hello 1' }] } }, { 'idempotency-key': 'trips-1' });
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  const tried = having(counter.takeTransactions(), 'pg_try_advisory_xact_lock');
  assert.is(tried.length, 1);
  assert.ok(tried[0]!.rolled_back || tried[0]!.statements.includes('rollback'), 'the replay rolls its transaction back');
  // BEGIN + key + the thread statement; the record holds the thread's history as its length, so
  // the replay reads that prefix (api/framework/idempotency.ts storedBody), then the ROLLBACK:
  // sent as soon as the prefix is read, so before or after the thread statement's answer
  // arrives (two or three round trips).
  assert.ok(tried[0]!.round_trips <= 3, JSON.stringify(tried[0]));
  assert.ok(tried[0]!.statements.some((s) => s.includes('jsonb_array_elements(message_history) with ordinality')), 'the history prefix is read back');
  assert.not.ok(tried[0]!.statements.includes('commit'), 'nothing commits');
});

test.run();
