import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineFor, expireLeasesPass, sealAndAdvance } from '../../../actors/index.js';
import { claimRuns, handOffRun, ID_PREFIX, newId } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, type RunFixture } from '../../support/run-fixture.js';

// Attempt rows end with the change that moves their run on (issue 19, item 11). A control-only
// service runs no worker, so the test claims runs itself the way a worker does, then stops
// exactly where a process killed with SIGKILL would: right after the seal (or handoff) commits.
const test = suite('actors/run-engine/attempt-rows');
let f: RunFixture;

test.before(async () => {
  f = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
});
test.after(async () => {
  await f?.stop();
});

const attemptRow = async (id: string) => (await query<any>(f.db.url, 'select ended_at, outcome, charged from run_attempts where id = $1', [id]))[0];

/** Posts an input on a fresh thread and claims its run as worker `wrk_test` would. */
async function claimedRun() {
  const thread = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
  const posted = await send(f, 'hello', {}, thread);
  assert.is(posted.status, 201);
  const runId = posted.body.run.id as string;
  const [run] = await claimRuns(f.service.services.pool, 'wrk_test', 50, 30, () => newId(ID_PREFIX.attempt)).then((rows) => rows.map((c) => c.run).filter((r) => r.id === runId));
  assert.ok(run, 'the run was claimed');
  assert.is((await attemptRow(run.current_attempt_id!)).ended_at, null);
  return run;
}

test('the seal ends the attempt in its own statement: nothing is left open when the process dies right after it', async () => {
  const engine = engineFor(f.service.services);
  for (const status of ['completed', 'failed', 'waiting'] as const) {
    const run = await claimedRun();
    const change = { status, usage: {}, failure: status === 'failed' ? { code: 'model_error', message: 'x' } : null, ...(status === 'waiting' ? { wait_reason: 'approval', pending: { approvals: [], calls: [] } } : {}) };
    const sealed = await sealAndAdvance(engine, run, run.current_attempt_id, change, []);
    assert.is(sealed?.status, status);
    // The "process" stops here: no endAttempt call follows.
    const row = await attemptRow(run.current_attempt_id!);
    assert.ok(row.ended_at, `${status}: the attempt ended with the seal`);
    assert.is(row.outcome, status);
    assert.is(row.charged, status === 'failed');
  }
});

test('a handoff ends the attempt (uncharged) in its own statement', async () => {
  const run = await claimedRun();
  assert.ok(await handOffRun(f.service.services.pool, run.id, run.current_attempt_id!));
  const row = await attemptRow(run.current_attempt_id!);
  assert.ok(row.ended_at);
  assert.is(row.outcome, 'handoff');
  assert.is(row.charged, false);
  assert.not.ok(await handOffRun(f.service.services.pool, run.id, run.current_attempt_id!), 'a second handoff is fenced out');
});

test('expire_leases closes attempt rows an older release left open after a seal or a handoff; a running attempt stays open', async () => {
  const engine = engineFor(f.service.services);
  // What a release that ended attempts in a second statement leaves after SIGKILL in between.
  const sealedRun = await claimedRun();
  await query(f.db.url, `update runs set status = 'failed', sealed_at = now(), lease_owner = null, lease_expires_at = null where id = $1`, [sealedRun.id]);
  const handedRun = await claimedRun();
  await query(f.db.url, `update runs set status = 'accepted', current_attempt_id = null, lease_owner = null, lease_expires_at = null where id = $1`, [handedRun.id]);
  const runningRun = await claimedRun();
  const pass = await expireLeasesPass(engine);
  assert.ok(pass.closed >= 2, `closed ${pass.closed}`);
  const sealedRow = await attemptRow(sealedRun.current_attempt_id!);
  assert.ok(sealedRow.ended_at);
  assert.is(sealedRow.outcome, 'failed');
  assert.is(sealedRow.charged, true);
  const handedRow = await attemptRow(handedRun.current_attempt_id!);
  assert.ok(handedRow.ended_at);
  assert.is(handedRow.outcome, 'handoff');
  assert.is(handedRow.charged, false);
  assert.is((await attemptRow(runningRun.current_attempt_id!)).ended_at, null, 'the current attempt of a running run is left alone');
  const open = await query<{ n: number }>(f.db.url, `select count(*)::int as n from run_attempts a join runs r on r.id = a.run_id where a.ended_at is null and (r.sealed_at is not null or r.current_attempt_id is distinct from a.id)`);
  assert.is(open[0]!.n, 0);
  assert.is((await expireLeasesPass(engine)).closed, 0, 'a second pass finds nothing');
});

test.run();
