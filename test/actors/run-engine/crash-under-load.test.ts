// Kill -9 of workers under load: many inputs over many threads against one control process and
// two worker processes, while the workers are killed with SIGKILL one after the other and
// replaced. Nothing may be lost or duplicated by the one-commit paths (folded idempotency
// claim, final step committed with the seal, inline checkpoints, batched claims):
// - inbox positions of every thread are gap-free 1..n (RUNS.md 1);
// - every input has exactly one entry and exactly one run, and every run seals exactly once
//   (completed, one attempt ended completed) (RUNS.md 2, 6);
// - item ordinals of every run are gap-free from 1 (RUNS.md 3), and the thread's history holds
//   every input exactly once.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelServer } from '../../../bench/model-server.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { spawnService, type ServiceProcess } from '../../support/processes.js';
import { type Client } from '../../support/identity.js';
import { startProcessCluster } from '../../support/process-cluster.js';
import { until } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/crash-under-load');
const THREADS = 20;
const INPUTS = 8; // per thread
let db: TestDatabase;
let model: ModelServer;
let control: ServiceProcess;
const workers: ServiceProcess[] = [];
let client: Client;
let agentId: string;
let sessionId: string;
let env: Record<string, string>;

test.before(async () => {
  db = await createTestDatabase('crashload');
  // Paced tokens: runs stay in flight long enough for a kill to land mid-stream.
  model = await startModelServer({ tokens_per_response: 6, token_delay_ms: 10 });
  ({ env, control, client, agentId, sessionId } = await startProcessCluster(db, model, {
    prefix: 'crashload',
    env: { SVC_WORKER__AUTHORITY_SECONDS: '2', SVC_WORKER__POLL_SECONDS: '1', SVC_WORKER__MAX_ATTEMPTS: '6', SVC_WORKER__SLOTS: '8', SVC_CONTROL__SCAN_SECONDS: '1' },
    agent: { name: 'loaded' },
  }));
  for (let i = 0; i < 2; i++) workers.push(await spawnService('worker', env));
});
test.after(async () => {
  for (const p of [...workers, control]) p?.kill('SIGKILL');
  await model?.close();
  await db?.drop();
});

test(`${THREADS * INPUTS} inputs over ${THREADS} threads while both workers are killed (SIGKILL) and replaced: every input exactly one run, sealed once, positions and ordinals gap-free`, async () => {
  const threads = await Promise.all(Array.from({ length: THREADS }, async () => (await client.post(`/api/v1/sessions/${sessionId}/threads`, {})).body.id as string));
  const texts = (t: number) => Array.from({ length: INPUTS }, (_, i) => `input ${t}-${i}`);
  // Each thread's inputs are sent one after another (arrival order is then known); threads in parallel.
  const sending = Promise.all(threads.map(async (thread, t) => {
    for (const text of texts(t)) {
      const r = await client.post(`/api/v1/threads/${thread}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text }] } }, { 'idempotency-key': `load-${text.replaceAll(' ', '-')}` });
      assert.is(r.status, 201, JSON.stringify(r.body));
    }
  }));
  // Kill each original worker mid-load (one with attempts in flight), replacing it at once.
  for (let k = 0; k < 2; k++) {
    await until(() => query<{ n: number }>(db.url, `select count(*)::int as n from runs where status = 'running'`), (rows) => rows[0]!.n > 0, 30_000);
    const victim = workers.shift()!;
    victim.kill('SIGKILL');
    workers.push(await spawnService('worker', env));
    await new Promise((r) => setTimeout(r, 700));
  }
  await sending;
  // Replaying every input after the fact changes nothing (the folded claim replays).
  const replay = await client.post(`/api/v1/threads/${threads[0]}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'input 0-0' }] } }, { 'idempotency-key': 'load-input-0-0' });
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  await until(
    () => query<{ n: number }>(db.url, `select count(*)::int as n from inbox_entries where status not in ('completed', 'failed')`),
    (rows) => rows[0]!.n === 0,
    120_000,
  );

  for (const [t, thread] of threads.entries()) {
    const entries = await query<{ id: string; position: number; status: string; text: string; assigned_run_id: string }>(
      db.url,
      `select id, position, status, payload->'content'->0->>'text' as text, assigned_run_id from inbox_entries where thread_id = $1 order by position`,
      [thread],
    );
    assert.equal(entries.map((e) => e.position), Array.from({ length: INPUTS }, (_, i) => i + 1), `thread ${t}: positions gap-free`);
    assert.equal(entries.map((e) => e.text), texts(t), `thread ${t}: positions follow arrival order`);
    assert.ok(entries.every((e) => e.status === 'completed'), `thread ${t}: ${JSON.stringify(entries.map((e) => e.status))}`);
    const history = await query<{ text: string }>(db.url, `select m->'content'->0->>'text' as text from threads, jsonb_array_elements(message_history) m where id = $1 and m->>'role' = 'user'`, [thread]);
    assert.equal(history.map((h) => h.text), texts(t), `thread ${t}: every input once in the history, in order`);
  }
  const runs = await query<{ id: string; source_entry_id: string; status: string; sealed: boolean; completed_attempts: number; open_attempts: number; attempts: number }>(
    db.url,
    `select r.id, r.source_entry_id, r.status, r.sealed_at is not null as sealed, r.attempts,
            (select count(*)::int from run_attempts a where a.run_id = r.id and a.outcome = 'completed') as completed_attempts,
            (select count(*)::int from run_attempts a where a.run_id = r.id and a.ended_at is null) as open_attempts
       from runs r`,
  );
  assert.is(runs.length, THREADS * INPUTS, 'one run per input');
  assert.is(new Set(runs.map((r) => r.source_entry_id)).size, runs.length, 'no entry has two runs');
  const entryRuns = await query<{ n: number }>(db.url, `select count(*)::int as n from inbox_entries e join runs r on r.id = e.assigned_run_id and r.source_entry_id = e.id`);
  assert.is(entryRuns[0]!.n, THREADS * INPUTS, "every entry's assigned run is the run made for it");
  for (const r of runs) {
    assert.is(r.status, 'completed', r.id);
    assert.ok(r.sealed);
    assert.is(r.completed_attempts, 1, `run ${r.id} sealed by exactly one attempt`);
    assert.is(r.open_attempts, 0);
  }
  assert.ok(runs.some((r) => r.attempts > 1), 'a kill landed on a running attempt');
  const gaps = await query<{ run_id: string }>(db.url, `select run_id from run_items group by run_id having max(ordinal) <> count(*) or min(ordinal) <> 1`);
  assert.equal(gaps, [], 'item ordinals gap-free from 1 in every run');
  const orphans = await query<{ n: number }>(db.url, `select count(*)::int as n from run_checkpoints c join runs r on r.id = c.run_id where c.key <> r.checkpoint_key`);
  assert.is(orphans[0]!.n, 0, 'no inline checkpoint is left beside the one its run points to');
});

test.run();
