// sealReleasingThread (runtime/stores/seal-release.ts): the seal of an ending run, its source
// entry's finish and its thread's release in ONE statement (the two-round-trip seal of
// actors/threads/run-operations.ts). Fenced like sealRun: under another attempt it matches no
// run, and then neither the entry nor the thread changes either.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimRuns, holdWorkerSession, ID_PREFIX, newId, sealInOneStatement, sealReleasingThread, type OneStatementSeal } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, type RunFixture } from '../../support/run-fixture.js';

const test = suite('runtime/stores/seal-release');
let f: RunFixture;
let pool: pg.Pool;
let session: pg.Client;

test.before(async () => {
  // control only: runs stay accepted until this test claims them.
  f = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
  pool = new pg.Pool({ connectionString: f.db.url, max: 2 });
  // The claiming worker holds its session lock, as a live worker process does (worker-sessions.ts).
  session = new pg.Client({ connectionString: f.db.url });
  await session.connect();
  assert.ok(await holdWorkerSession(session, 'wrk_seal'));
});
test.after(async () => {
  await session?.end();
  await pool?.end();
  await f?.stop();
});

const state = async (runId: string, entryId: string, threadId: string) =>
  (await query<{ run: string; entry: string; current: string | null; last: string | null; count: number; attempt_outcome: string | null }>(
    f.db.url,
    `select r.status as run, e.status as entry, t.current_run_id as current, t.last_run_id as last, t.message_count as count,
            (select outcome from run_attempts where run_id = r.id order by number desc limit 1) as attempt_outcome
       from runs r, inbox_entries e, threads t where r.id = $1 and e.id = $2 and t.id = $3`,
    [runId, entryId, threadId],
  ))[0]!;

async function acceptedRun(): Promise<{ runId: string; entryId: string; threadId: string; attemptId: string; run: { id: string; workspace_id: string; source_entry_id: string | null; thread_id: string } }> {
  const threadId = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
  const posted = await send(f, 'seal me', {}, threadId);
  assert.is(posted.status, 201);
  const claimed = (await claimRuns(pool, 'wrk_seal', 1, 30, () => newId(ID_PREFIX.attempt)))[0]?.run;
  assert.is(claimed!.id, posted.body.run.id);
  return { runId: claimed!.id, entryId: posted.body.entry.id, threadId, attemptId: claimed!.current_attempt_id!, run: { id: claimed!.id, workspace_id: claimed!.workspace_id, source_entry_id: claimed!.source_entry_id, thread_id: threadId } };
}

const usage = { requests: 1, input_tokens: 3, output_tokens: 2 };

test('fenced out (another attempt): nothing changes — not the run, not its entry, not its thread', async () => {
  const r = await acceptedRun();
  const before = await state(r.runId, r.entryId, r.threadId);
  const sealed = await sealReleasingThread(pool, r.run, 'att_not_the_owner', { status: 'completed', output: 'x', usage }, 2, [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
  assert.is(sealed, undefined);
  assert.equal(await state(r.runId, r.entryId, r.threadId), before);
  assert.is(before.current, r.runId);
});

test('the owner seals: run completed, attempt ended, entry completed, thread released with the messages appended', async () => {
  const r = await acceptedRun();
  const history = [{ role: 'user', content: 'seal me' }, { role: 'assistant', content: 'sealed' }];
  const sealed = await sealReleasingThread(pool, r.run, r.attemptId, { status: 'completed', output: 'sealed', usage }, 2, history);
  assert.ok(sealed);
  assert.is(sealed!.run.status, 'completed');
  assert.is(sealed!.entry?.status, 'completed');
  assert.is(sealed!.thread.current_run_id, null);
  assert.is(sealed!.thread.message_count, 2);
  assert.equal(await state(r.runId, r.entryId, r.threadId), { run: 'completed', entry: 'completed', current: null, last: r.runId, count: 2, attempt_outcome: 'completed' });
  const [thread] = await query<{ history: unknown[] }>(f.db.url, 'select message_history as history from threads where id = $1', [r.threadId]);
  assert.equal(thread!.history, history);
});

test('a failed run with nothing to append: the entry fails with the run\'s failure, the history is left as it was', async () => {
  const r = await acceptedRun();
  const failure = { code: 'model_error', message: 'the model failed' };
  const sealed = await sealReleasingThread(pool, r.run, r.attemptId, { status: 'failed', failure, usage }, 0, []);
  assert.is(sealed!.run.status, 'failed');
  assert.is(sealed!.entry?.status, 'failed');
  assert.equal(sealed!.entry?.failure, failure);
  assert.equal(await state(r.runId, r.entryId, r.threadId), { run: 'failed', entry: 'failed', current: null, last: r.runId, count: 0, attempt_outcome: 'failed' });
});

// A final step with no fence of its own (FinalStepCommit.items): its items and its step columns
// (SealChange.ending_step) are the seal's, so they commit with it — or, fenced out, not at all.
test('the last step folded into the seal: its items and next ordinal only when the seal matches', async () => {
  const r = await acceptedRun();
  const at = new Date().toISOString();
  const items = [1, 2].map((ordinal) => ({ ordinal, id: `itm_fold_${ordinal}_${r.runId}`, kind: 'message', state: 'completed', content: { role: ordinal === 1 ? 'user' : 'assistant', text: `t${ordinal}` }, content_refs: {}, first_stream_id: null, last_stream_id: null, started_at: at, ended_at: at }));
  const history = [{ role: 'user', content: 't1' }, { role: 'assistant', content: 't2' }];
  const columns = async () => (await query<{ items: number; next_ordinal: number; display_position: string | null }>(f.db.url, 'select (select count(*)::int from run_items where run_id = $1) as items, next_ordinal, display_position from runs where id = $1', [r.runId]))[0]!;
  const before = await columns();
  // Fenced out, with and without messages to append: no item, no column changed.
  assert.is(await sealReleasingThread(pool, r.run, 'att_not_the_owner', { status: 'completed', output: 'x', usage, ending_step: { next_ordinal: 3 } }, 2, history, false, items), undefined);
  assert.is(await sealReleasingThread(pool, r.run, 'att_not_the_owner', { status: 'completed', output: 'x', usage, ending_step: { next_ordinal: 3 } }, 0, [], false, items), undefined);
  assert.equal(await columns(), before);
  const sealed = await sealReleasingThread(pool, r.run, r.attemptId, { status: 'completed', output: 'done', usage, ending_step: { next_ordinal: 3 } }, 2, history, false, items);
  assert.is(sealed!.run.status, 'completed');
  assert.equal(await columns(), { items: 2, next_ordinal: 3, display_position: '3' });
  const rows = await query<{ ordinal: number; content: unknown }>(f.db.url, 'select ordinal, content from run_items where run_id = $1 order by ordinal', [r.runId]);
  assert.equal(rows, items.map((i) => ({ ordinal: i.ordinal, content: i.content })));
});

// sealInOneStatement (runtime/stores/seal-one.ts): the same seal as ONE statement, its own
// transaction, when nothing follows the release — checked in the statement's snapshot, with
// the release conditioned on the thread's position; otherwise it declines and writes nothing.
const oneSeal = (r: Awaited<ReturnType<typeof acceptedRun>>, over: Partial<OneStatementSeal> = {}): OneStatementSeal => ({
  run: r.run, attemptId: r.attemptId, change: { status: 'completed', output: 'one', usage, ending_step: { next_ordinal: 3 } }, historyStart: 0,
  history: [{ role: 'user', content: 'seal me' }, { role: 'assistant', content: 'one' }], printAppended: true,
  items: [1, 2].map((ordinal) => ({ ordinal, id: `itm_one_${ordinal}_${r.runId}`, kind: 'message', state: 'completed', content: { text: `t${ordinal}` }, content_refs: {}, first_stream_id: null, last_stream_id: null, started_at: new Date().toISOString(), ended_at: new Date().toISOString() })),
  concernedSql: null, ...over,
});
const items = async (runId: string) => (await query<{ n: number }>(f.db.url, 'select count(*)::int as n from run_items where run_id = $1', [runId]))[0]!.n;

test('one statement: seals, inserts the step\'s items, finishes the entry, releases the thread with the messages', async () => {
  const r = await acceptedRun();
  const outcome = await sealInOneStatement(pool, oneSeal(r));
  assert.is(outcome.declined, false);
  const sealed = outcome.declined ? undefined : outcome.sealed;
  assert.is(sealed?.run.status, 'completed');
  assert.is(sealed?.run.next_ordinal, 3);
  assert.is(sealed?.thread.current_run_id, null);
  assert.is(sealed?.thread.message_count, 2);
  assert.is(sealed?.appendedText, '[{"role": "user", "content": "seal me"}, {"role": "assistant", "content": "one"}]');
  assert.equal(await state(r.runId, r.entryId, r.threadId), { run: 'completed', entry: 'completed', current: null, last: r.runId, count: 2, attempt_outcome: 'completed' });
  assert.is(await items(r.runId), 2);
});

test('one statement, nothing to append and no items: a failed run still seals and releases its thread', async () => {
  const r = await acceptedRun();
  const failure = { code: 'model_error', message: 'the model failed' };
  const outcome = await sealInOneStatement(pool, oneSeal(r, { change: { status: 'failed', failure, usage }, history: [], items: [] }));
  assert.is(outcome.declined, false);
  assert.equal(await state(r.runId, r.entryId, r.threadId), { run: 'failed', entry: 'failed', current: null, last: r.runId, count: 0, attempt_outcome: 'failed' });
});

test('one statement: fenced out, or something to follow the release (a pending entry, a hook concerned): nothing written', async () => {
  const r = await acceptedRun();
  const before = await state(r.runId, r.entryId, r.threadId);
  const fenced = await sealInOneStatement(pool, oneSeal(r, { attemptId: 'att_not_the_owner' }));
  assert.equal(fenced, { declined: false, sealed: undefined });
  assert.equal(await sealInOneStatement(pool, oneSeal(r, { concernedSql: "t.labels ->> 'nothing' is null" })), { declined: true });
  assert.equal(await sealInOneStatement(pool, oneSeal(r, { historyStart: 5 })), { declined: true }, 'a history that is not the run\'s start');
  const queued = await send(f, 'waits behind the run', {}, r.threadId);
  assert.is(queued.body.run, null);
  assert.equal(await sealInOneStatement(pool, oneSeal(r)), { declined: true });
  assert.equal({ ...(await state(r.runId, r.entryId, r.threadId)) }, before);
  assert.is(await items(r.runId), 0);
});

// The race the transaction path's thread lock rules out: an input takes a position after the
// statement's snapshot, before its release reaches the thread's row. Held here by a transaction
// that locks the row, then takes a position and commits while the statement waits on it.
test('one statement: an input taking a position after its snapshot makes it fail whole (declined, nothing written)', async () => {
  const r = await acceptedRun();
  const before = await state(r.runId, r.entryId, r.threadId);
  const blocker = new pg.Client({ connectionString: f.db.url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('select 1 from threads where id = $1 for update', [r.threadId]);
    const sealing = sealInOneStatement(pool, oneSeal(r));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await blocker.query('update threads set next_position = next_position + 1 where id = $1', [r.threadId]);
    await blocker.query('commit');
    assert.equal(await sealing, { declined: true });
  } finally {
    await blocker.end();
  }
  assert.equal(await state(r.runId, r.entryId, r.threadId), before);
  assert.is(await items(r.runId), 0);
});

test.run();
