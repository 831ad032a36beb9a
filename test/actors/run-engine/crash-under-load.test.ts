// Kill -9 of workers under load (issue #18): 1,000 inputs (100 threads × 10 inputs) against one
// control process and two worker processes, while the workers are killed with SIGKILL one after
// the other (KILLS times, each kill landing on a worker that holds running runs) and each is
// replaced at once. Threads send in parallel, the inputs of one thread one after another (so
// arrival order is known), with at most SENDERS requests in flight. Nothing may be lost or
// duplicated by the one-commit paths (folded idempotency claim, final step committed with the
// seal, inline checkpoints, batched claims):
// - inbox positions of every thread are gap-free 1..10 and follow arrival order (RUNS.md 1);
// - every input has exactly one entry and exactly one run, and every run seals exactly once
//   (completed, exactly one attempt ended completed, none left open) (RUNS.md 2, 6);
// - every kill cost its victim the attempt of at least one run it held at that moment (requeued,
//   then completed on another worker);
// - item ordinals of every run are gap-free from 1 and no item is committed twice (every run
//   holds exactly its input and one answer, distinct item ids) (RUNS.md 3), and each thread's
//   history holds every input exactly once, in order, each followed by exactly one answer.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelServer } from '../../../bench/model-server.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { spawnService, type ServiceProcess } from '../../support/processes.js';
import { type Client } from '../../support/identity.js';
import { startProcessCluster } from '../../support/process-cluster.js';

const test = suite('actors/run-engine/crash-under-load');
const THREADS = 100;
const INPUTS = 10; // per thread
const TOTAL = THREADS * INPUTS;
const SENDERS = 16; // inbox requests in flight at once (client concurrency)
const KILLS = 4; // each original worker and each first replacement, spread over the load
const SLOTS = 8; // attempts per worker process
let db: TestDatabase;
let conn: pg.Client; // the test's own connection: every check and poll, one at a time
let model: ModelServer;
let control: ServiceProcess;
const workers: Array<{ process: ServiceProcess; id: string }> = [];
let client: Client;
let agentId: string;
let sessionId: string;
let env: Record<string, string>;

async function rows<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  return (await conn.query<T>(sql, values)).rows;
}

/** Polls (every 100 ms) until `accept` holds. */
async function waitFor<T extends pg.QueryResultRow>(sql: string, accept: (rows: T[]) => boolean, timeoutMs: number, values: unknown[] = []): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await rows<T>(sql, values);
    if (accept(found)) return found;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms (${sql}): ${JSON.stringify(found).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a worker process and learns its worker id (the worker_sessions row it registers). */
async function startWorker(): Promise<{ process: ServiceProcess; id: string }> {
  const before = new Set((await rows<{ worker_id: string }>(`select worker_id from worker_sessions`)).map((r) => r.worker_id));
  const worker = await spawnService('worker', env);
  const registered = await waitFor<{ worker_id: string }>(`select worker_id from worker_sessions`, (found) => found.some((r) => !before.has(r.worker_id)), 20_000);
  const fresh = registered.filter((r) => !before.has(r.worker_id));
  assert.is(fresh.length, 1, `one new worker session: ${JSON.stringify(fresh)}`);
  return { process: worker, id: fresh[0]!.worker_id };
}

test.before(async () => {
  db = await createTestDatabase('crashload');
  conn = new pg.Client({ connectionString: db.url });
  await conn.connect();
  // Paced tokens: runs stay in flight long enough for a kill to land mid-stream.
  model = await startModelServer({ tokens_per_response: 6, token_delay_ms: 10 });
  ({ env, control, client, agentId, sessionId } = await startProcessCluster(db, model, {
    prefix: 'crashload',
    env: { SVC_WORKER__AUTHORITY_SECONDS: '2', SVC_WORKER__POLL_SECONDS: '1', SVC_WORKER__MAX_ATTEMPTS: '6', SVC_WORKER__SLOTS: String(SLOTS), SVC_CONTROL__SCAN_SECONDS: '1' },
    agent: { name: 'loaded' },
  }));
  for (let i = 0; i < 2; i++) workers.push(await startWorker());
});
test.after(async () => {
  for (const p of [...workers.map((w) => w.process), control]) p?.kill('SIGKILL');
  await conn?.end(); // resolves once the connection is closed, before the database is dropped
  await model?.close();
  await db?.drop();
});

test(`${TOTAL} inputs over ${THREADS} threads while the workers are killed ${KILLS} times (SIGKILL) and replaced: every input exactly one run, sealed once, positions and ordinals gap-free, no item twice`, async () => {
  const threads = await Promise.all(Array.from({ length: THREADS }, async () => (await client.post(`/api/v1/sessions/${sessionId}/threads`, {})).body.id as string));
  const texts = (t: number) => Array.from({ length: INPUTS }, (_, i) => `input ${t}-${i}`);
  // Every thread sends its inputs one after another (arrival order is then known); threads run
  // in parallel, with at most SENDERS requests in flight over all of them.
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  const acquire = async (): Promise<void> => {
    if (inFlight < SENDERS) {
      inFlight++;
      return;
    }
    await new Promise<void>((r) => waiting.push(r));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };
  const sending = Promise.all(threads.map(async (thread, t) => {
    for (const text of texts(t)) {
      await acquire();
      try {
        const r = await client.post(`/api/v1/threads/${thread}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text }] } }, { 'idempotency-key': `load-${text.replaceAll(' ', '-')}` });
        assert.is(r.status, 201, JSON.stringify(r.body));
      } finally {
        release();
      }
    }
  }));
  // Kill the oldest worker KILLS times, spread evenly over the load (once 10%, 30%, 50%, 70% of
  // the inputs have completed: the first kill while inputs still arrive, the last with 300 still
  // to run), each time only while it holds running runs, and replace it at once.
  const victims: Array<{ id: string; held: string[] }> = [];
  for (let k = 0; k < KILLS; k++) {
    const victim = workers.shift()!;
    await waitFor<{ n: number }>(`select count(*)::int as n from inbox_entries where status = 'completed'`, (found) => found[0]!.n >= Math.floor(((k + 0.5) * TOTAL) / (KILLS + 1)), 90_000);
    // Half its slots busy at least, so some of these runs are still mid-stream when the signal lands.
    const held = await waitFor<{ id: string }>(`select id from runs where status = 'running' and lease_owner = $1`, (found) => found.length >= SLOTS / 2, 30_000, [victim.id]);
    victim.process.kill('SIGKILL');
    await victim.process.exited;
    victims.push({ id: victim.id, held: held.map((r) => r.id) });
    workers.push(await startWorker());
  }
  await sending;
  // Replaying an input after the fact changes nothing (the folded claim replays).
  const replay = await client.post(`/api/v1/threads/${threads[0]}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'input 0-0' }] } }, { 'idempotency-key': 'load-input-0-0' });
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  await waitFor<{ n: number }>(`select count(*)::int as n from inbox_entries where status not in ('completed', 'failed')`, (found) => found[0]!.n === 0, 120_000);

  // Positions, arrival order and status of every thread's entries; exactly TOTAL entries.
  const entries = await rows<{ thread_id: string; position: number; status: string; text: string }>(
    `select thread_id, position, status, payload->'content'->0->>'text' as text from inbox_entries order by thread_id, position`,
  );
  assert.is(entries.length, TOTAL, 'one entry per input');
  const histories = await rows<{ id: string; roles: string[]; texts: string[] }>(
    `select t.id,
            coalesce((select array_agg(m->>'role' order by n) from jsonb_array_elements(t.message_history) with ordinality h(m, n)), '{}') as roles,
            coalesce((select array_agg(m->'content'->0->>'text' order by n) from jsonb_array_elements(t.message_history) with ordinality h(m, n) where m->>'role' = 'user'), '{}') as texts
       from threads t where t.id = any($1::text[])`,
    [threads],
  );
  assert.is(histories.length, THREADS);
  const historyOf = new Map(histories.map((h) => [h.id, h]));
  const exchanges = Array.from({ length: INPUTS }, () => ['user', 'assistant']).flat();
  for (const [t, thread] of threads.entries()) {
    const mine = entries.filter((e) => e.thread_id === thread);
    assert.equal(mine.map((e) => e.position), Array.from({ length: INPUTS }, (_, i) => i + 1), `thread ${t}: positions gap-free`);
    assert.equal(mine.map((e) => e.text), texts(t), `thread ${t}: one entry per input, positions follow arrival order`);
    assert.ok(mine.every((e) => e.status === 'completed'), `thread ${t}: ${JSON.stringify(mine.map((e) => e.status))}`);
    assert.equal(historyOf.get(thread)?.texts, texts(t), `thread ${t}: every input once in the history, in order`);
    assert.equal(historyOf.get(thread)?.roles, exchanges, `thread ${t}: one answer per input in the history, none twice`);
  }

  const runs = await rows<{ id: string; source_entry_id: string; status: string; sealed: boolean; completed_attempts: number; open_attempts: number; attempts: number }>(
    `select r.id, r.source_entry_id, r.status, r.sealed_at is not null and r.usage_at_seal is not null as sealed, r.attempts,
            (select count(*)::int from run_attempts a where a.run_id = r.id and a.outcome = 'completed') as completed_attempts,
            (select count(*)::int from run_attempts a where a.run_id = r.id and a.ended_at is null) as open_attempts
       from runs r`,
  );
  assert.is(runs.length, TOTAL, 'one run per input');
  assert.is(new Set(runs.map((r) => r.source_entry_id)).size, TOTAL, 'no entry has two runs');
  const entryRuns = await rows<{ n: number }>(`select count(*)::int as n from inbox_entries e join runs r on r.id = e.assigned_run_id and r.source_entry_id = e.id`);
  assert.is(entryRuns[0]!.n, TOTAL, "every entry's assigned run is the run made for it");
  for (const r of runs) {
    assert.is(r.status, 'completed', r.id);
    assert.ok(r.sealed, `run ${r.id} sealed with its usage`);
    assert.is(r.completed_attempts, 1, `run ${r.id} sealed by exactly one attempt`);
    assert.is(r.open_attempts, 0, `run ${r.id}: no attempt left open`);
  }

  // Every kill landed on runs in flight: the victim's attempt of a run it held just before the
  // signal ended expired (requeued by the lost-worker scan), and each such run's one completed
  // attempt ran on another worker.
  for (const [k, victim] of victims.entries()) {
    const lost = await rows<{ run_id: string }>(`select distinct run_id from run_attempts where worker_id = $1 and outcome = 'expired' and run_id = any($2::text[])`, [victim.id, victim.held]);
    assert.ok(lost.length > 0, `kill ${k} (${victim.id}, held ${victim.held.join(',')}): a run it held at the kill lost its attempt`);
    const finishedElsewhere = await rows<{ n: number }>(
      `select count(*)::int as n from run_attempts where run_id = any($1::text[]) and outcome = 'completed' and worker_id <> $2`,
      [lost.map((l) => l.run_id), victim.id],
    );
    assert.is(finishedElsewhere[0]!.n, lost.length, `kill ${k}: every run it cost an attempt completed on another worker`);
  }
  assert.ok(runs.filter((r) => r.attempts > 1).length >= KILLS, 'the kills cost runs attempts');

  const gaps = await rows<{ run_id: string }>(`select run_id from run_items group by run_id having max(ordinal) <> count(*) or min(ordinal) <> 1`);
  assert.equal(gaps, [], 'item ordinals gap-free from 1 in every run');
  const paged = await rows<{ n: number }>(`select count(*)::int as n from run_display_pages`);
  assert.is(paged[0]!.n, 0, 'no item was packed into a page (the checks above read every item from run_items)');
  // Every run answers one single-step response: its input and one text message, so a duplicated
  // item shows as a run with more items (or a repeated item id).
  const shapes = await rows<{ items: number; distinct_ids: number; kinds: string; runs: number }>(
    `select items, distinct_ids, kinds, count(*)::int as runs from (
       select r.id, count(i.ordinal)::int as items, count(distinct i.id)::int as distinct_ids, coalesce(string_agg(i.kind, ',' order by i.ordinal), '') as kinds
         from runs r left join run_items i on i.run_id = r.id group by r.id) s
      group by items, distinct_ids, kinds`,
  );
  assert.equal(shapes, [{ items: 2, distinct_ids: 2, kinds: 'user_message,text_message', runs: TOTAL }], 'every run holds its input and one answer, each once');
  const orphans = await rows<{ n: number }>(`select count(*)::int as n from run_checkpoints c join runs r on r.id = c.run_id where c.key is distinct from r.checkpoint_key`);
  assert.is(orphans[0]!.n, 0, 'no inline checkpoint is left beside the one its run points to');
});

test.run();
