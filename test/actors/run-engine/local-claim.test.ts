// Role all: a POST that starts a run claims it for the process's own worker in the accepting
// transaction when a slot is free (issue #18, WorkerHost.reserve). What must hold:
// - the slot count is exact: a full host leaves the run accepted for any worker (NOTIFY, claim),
//   and that run starts once the slot frees;
// - a reservation whose transaction fails is given back: the next run still finds the slot;
// - the claim is a claim: attempt 1 is open, leased to this worker, in the same commit.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { keyedScript, newThread, send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import type { ModelScript } from '../../../bench/model-server.js';

const test = suite('actors/run-engine/local-claim');
let f: RunFixture;
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  f = await startRunFixture({ script: keyedScript(scripts), env: { SVC_WORKER__SLOTS: '1' } });
});
test.after(async () => {
  await f?.stop();
});

test('the run commits claimed: attempt 1 open and leased to this worker, in the POST transaction', async () => {
  // The model holds its answer until the row is read: a run already sealed has no lease any more.
  let release!: () => void;
  scripts.set('claimed-at-once', [{ type: 'text', text: 'claimed', hold: new Promise<void>((r) => (release = r)) }]);
  const posted = await send(f, 'claimed-at-once');
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  assert.is(posted.body.run.status, 'running');
  const [row] = await query<{ lease_owner: string; attempts: number; current_attempt_id: string; lease_expires_at: Date }>(f.db.url, 'select lease_owner, attempts, current_attempt_id, lease_expires_at from runs where id = $1', [posted.body.run.id]);
  assert.ok(row!.lease_owner, 'leased');
  assert.ok(row!.lease_expires_at, 'with a lease end');
  const attempts = await query<{ id: string; number: number; worker_id: string }>(f.db.url, 'select id, number, worker_id from run_attempts where run_id = $1', [posted.body.run.id]);
  assert.equal(attempts.map((a) => a.number), [1]);
  assert.is(attempts[0]!.id, posted.body.run.current_attempt_id);
  assert.is(attempts[0]!.worker_id, row!.lease_owner);
  release();
  const done = await waitForRun(f, posted.body.run.id);
  assert.is(done.status, 'completed');
  assert.is(done.attempts, 1);
});

test('a full host leaves the run accepted for any worker; it starts when the slot frees', async () => {
  let release!: () => void;
  scripts.set('holds-the-slot', [{ type: 'text', text: 'held', hold: new Promise<void>((r) => (release = r)) }]);
  try {
    const holding = await send(f, 'holds-the-slot', {}, await newThread(f));
    // (Claimed by its POST, or by a claim if the previous test's attempt had not yet freed the
    // slot when it came.) Once it runs, the only slot is taken.
    await until(() => f.client.get(`/api/v1/runs/${holding.body.run.id}`), (r) => r.body.status === 'running', 5000);
    const waiting = await send(f, 'waits-for-a-slot', {}, await newThread(f));
    assert.is(waiting.status, 201);
    assert.is(waiting.body.run.status, 'accepted', 'no slot was free: the run is anyone\'s to claim');
    assert.is(waiting.body.run.attempts, 0);
    release();
    assert.is((await waitForRun(f, holding.body.run.id)).status, 'completed');
    assert.is((await waitForRun(f, waiting.body.run.id)).status, 'completed');
  } finally {
    release?.();
  }
});

test('a reservation whose transaction fails is given back: the next run gets the slot', async () => {
  // A run insert that fails after the slot was reserved (the thread lock and checks passed):
  // a trigger refuses runs labelled explode.
  await query(f.db.url, `create or replace function test_refuse_run() returns trigger language plpgsql as $$
    begin if new.labels->>'explode' = 'yes' then raise exception 'refused by the test'; end if; return new; end $$`);
  await query(f.db.url, 'create trigger test_refuse_run before insert on runs for each row execute function test_refuse_run()');
  try {
    const thread = await newThread(f);
    for (let i = 0; i < 3; i++) {
      const refused = await send(f, `refused-${i}`, { options: { labels: { explode: 'yes' } } }, thread);
      assert.is(refused.status, 500, JSON.stringify(refused.body));
    }
    // With a leaked reservation the only slot would stay taken: this run would be accepted
    // (not claimed at acceptance) and never claimed, so it would never complete.
    const next = await send(f, 'after-refusals', {}, thread);
    assert.is(next.status, 201, JSON.stringify(next.body));
    assert.is((await waitForRun(f, next.body.run.id, undefined, 10_000)).status, 'completed');
  } finally {
    await query(f.db.url, 'drop trigger if exists test_refuse_run on runs');
  }
});

test('a seal hands its slot to the thread\'s next run, even when it was the only slot', async () => {
  let release!: () => void;
  scripts.set('hands-over', [{ type: 'text', text: 'first', hold: new Promise<void>((r) => (release = r)) }]);
  try {
    const thread = await newThread(f);
    const first = await send(f, 'hands-over', {}, thread);
    await until(() => f.client.get(`/api/v1/runs/${first.body.run.id}`), (r) => r.body.status === 'running', 5000);
    const queued = await send(f, 'handed-over', {}, thread);
    assert.is(queued.body.run, null, 'the thread is busy: queued');
    release();
    await waitForRun(f, first.body.run.id);
    const entry = await until(() => f.client.get(`/api/v1/threads/${thread}/inbox/${queued.body.entry.id}`), (r) => r.body.assigned_run_id !== null, 5000);
    const next = entry.body.assigned_run_id as string;
    assert.is((await waitForRun(f, next)).status, 'completed');
    // The only slot was the sealing attempt's: without the hand-over the run would have been
    // accepted for any worker and claimed later (started after it was created).
    const [row] = await query<{ same: boolean; attempts: number }>(f.db.url, 'select started_at = created_at as same, attempts from runs where id = $1', [next]);
    assert.equal(row, { same: true, attempts: 1 });
  } finally {
    release?.();
  }
});

test('the host keeps its slot count: one run at a time on one slot, whoever claimed it', async () => {
  const releases: Array<() => void> = [];
  const keys = ['slot-a', 'slot-b', 'slot-c', 'slot-d'];
  for (const key of keys) scripts.set(key, [{ type: 'text', text: key, hold: new Promise<void>((r) => releases.push(r)) }]);
  const runs: string[] = [];
  for (const key of keys) runs.push((await send(f, key, {}, await newThread(f))).body.run.id as string);
  const runningNow = async () => (await query<{ n: number }>(f.db.url, `select count(*)::int as n from runs where id = any($1) and status = 'running'`, [runs]))[0]!.n;
  for (let i = 0; i < keys.length; i++) {
    await until(runningNow, (n) => n === 1, 5000);
    // Still one: a second would mean a slot counted twice (a reservation and a claim).
    await new Promise((r) => setTimeout(r, 150));
    assert.is(await runningNow(), 1);
    const [running] = await query<{ id: string }>(f.db.url, `select id from runs where id = any($1) and status = 'running'`, [runs]);
    releases[runs.indexOf(running!.id)]!();
    await waitForRun(f, running!.id);
  }
  for (const id of runs) assert.is((await waitForRun(f, id)).status, 'completed');
});

test.run();
