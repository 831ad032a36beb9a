// sealReleasingThread (runtime/stores/seal-release.ts): the seal of an ending run, its source
// entry's finish and its thread's release in ONE statement (the two-round-trip seal of
// actors/threads/run-operations.ts). Fenced like sealRun: under another attempt it matches no
// run, and then neither the entry nor the thread changes either.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimRuns, holdWorkerSession, ID_PREFIX, newId, SealBatcher, sealInOneStatement, sealManyInOneStatement, sealReleasingThread, type OneStatementSeal } from '../../../runtime/index.js';
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

// sealManyInOneStatement (SealBatcher's shared statement): several seals in one statement, each
// answered and written as alone — sealed, fenced out or declined — beside the others.
test('several seals in one statement: each as alone — sealed (with or without messages and items), fenced out, declined', async () => {
  const [sealedOne, fencedOne, queuedOne, failedOne] = [await acceptedRun(), await acceptedRun(), await acceptedRun(), await acceptedRun()];
  const queued = await send(f, 'waits behind the run', {}, queuedOne.threadId);
  assert.is(queued.body.run, null);
  const before = { fenced: await state(fencedOne.runId, fencedOne.entryId, fencedOne.threadId), queued: await state(queuedOne.runId, queuedOne.entryId, queuedOne.threadId) };
  const failure = { code: 'model_error', message: 'the model failed' };
  const outcomes = await sealManyInOneStatement(pool, [
    oneSeal(sealedOne),
    oneSeal(fencedOne, { attemptId: 'att_not_the_owner' }),
    oneSeal(queuedOne),
    oneSeal(failedOne, { change: { status: 'failed', failure, usage }, history: [], items: [] }),
  ]);
  assert.is(outcomes.length, 4);
  const sealed = outcomes[0]!.declined ? undefined : outcomes[0]!.sealed;
  assert.is(sealed?.run.id, sealedOne.runId);
  assert.is(sealed?.run.next_ordinal, 3);
  assert.is(sealed?.entry?.id, sealedOne.entryId);
  assert.is(sealed?.thread.id, sealedOne.threadId);
  assert.is(sealed?.appendedText, '[{"role": "user", "content": "seal me"}, {"role": "assistant", "content": "one"}]');
  assert.equal(await state(sealedOne.runId, sealedOne.entryId, sealedOne.threadId), { run: 'completed', entry: 'completed', current: null, last: sealedOne.runId, count: 2, attempt_outcome: 'completed' });
  assert.is(await items(sealedOne.runId), 2);
  assert.equal(outcomes[1], { declined: false, sealed: undefined }, 'fenced out');
  assert.equal(await state(fencedOne.runId, fencedOne.entryId, fencedOne.threadId), before.fenced);
  assert.equal(outcomes[2], { declined: true }, 'a pending entry follows the release');
  assert.equal(await state(queuedOne.runId, queuedOne.entryId, queuedOne.threadId), before.queued);
  assert.is(await items(queuedOne.runId), 0);
  const failedSeal = outcomes[3]!.declined ? undefined : outcomes[3]!.sealed;
  assert.is(failedSeal?.run.status, 'failed');
  assert.is(failedSeal?.appendedText, undefined);
  assert.equal(await state(failedOne.runId, failedOne.entryId, failedOne.threadId), { run: 'failed', entry: 'failed', current: null, last: failedOne.runId, count: 0, attempt_outcome: 'failed' });
  // A seal hook concerned (its condition over the thread row): all declined, nothing written.
  const [h1, h2] = [await acceptedRun(), await acceptedRun()];
  const concerned = "t.labels ->> 'nothing' is null";
  assert.equal(await sealManyInOneStatement(pool, [oneSeal(h1, { concernedSql: concerned }), oneSeal(h2, { concernedSql: concerned })]), [{ declined: true }, { declined: true }]);
  assert.is((await state(h1.runId, h1.entryId, h1.threadId)).run, 'running');
});

test('several seals in one statement: a thread that moves after the snapshot fails it whole; the batcher then seals each alone', async () => {
  const [moving, other] = [await acceptedRun(), await acceptedRun()];
  const before = { moving: await state(moving.runId, moving.entryId, moving.threadId), other: await state(other.runId, other.entryId, other.threadId) };
  const race = async (seal: () => Promise<unknown>): Promise<unknown> => {
    const blocker = new pg.Client({ connectionString: f.db.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from threads where id = $1 for update', [moving.threadId]);
      const sealing = seal().then((v) => v, (e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await blocker.query('update threads set next_position = next_position + 1 where id = $1', [moving.threadId]);
      await blocker.query('commit');
      return await sealing;
    } finally {
      await blocker.end();
    }
  };
  const failed = await race(() => sealManyInOneStatement(pool, [oneSeal(moving), oneSeal(other)]));
  assert.is((failed as { code?: string }).code, '22012', 'the guard: sealed and released do not count the same');
  assert.equal(await state(moving.runId, moving.entryId, moving.threadId), before.moving);
  assert.equal(await state(other.runId, other.entryId, other.threadId), before.other);
  assert.is(await items(other.runId), 0);
  // Through the batcher (issued together: one batch): the batch fails, then each seals alone —
  // the other run sealed by its own statement (not fenced out: the batch wrote nothing), the moved
  // thread's too (no entry was added: only its position moved, and its own snapshot sees that).
  const batcher = new SealBatcher(pool);
  const outcomes = (await race(() => Promise.all([batcher.seal(oneSeal(moving)), batcher.seal(oneSeal(other))]))) as Array<{ declined: boolean; sealed?: { run: { id: string } } }>;
  assert.equal(batcher.counts, { inputs: 2, statements: 2, failed: 1 });
  assert.is(outcomes[0]!.sealed?.run.id, moving.runId);
  assert.is(outcomes[1]!.sealed?.run.id, other.runId);
  assert.is(await items(other.runId), 2);
});

test.run();
