import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelScript, type ModelServer } from '../../../bench/model-server.js';
import { forgetLostWorkerSessions } from '../../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { spawnService, type ServiceProcess } from '../../support/processes.js';
import { type Client } from '../../support/identity.js';
import { startProcessCluster } from '../../support/process-cluster.js';
import { until } from '../../support/run-fixture.js';

// Real processes with the DEFAULT lease (worker.authority_seconds = 30): a worker killed with
// SIGKILL loses its database session, and with it the session lock the lost-worker scan looks
// for (runtime/stores/worker-sessions.ts), so its run is requeued long before its lease ends.
const test = suite('actors/run-engine/worker-liveness');
let db: TestDatabase;
let model: ModelServer;
let control: ServiceProcess;
const workers: ServiceProcess[] = [];
let client: Client;
let agentId: string;
let sessionId: string;
const scripts = new Map<string, ModelScript[]>();
let env: Record<string, string>;

const pidOf = (leaseOwner: string) => Number(leaseOwner.split('_')[1]);
const runRow = async (runId: string) => (await query<any>(db.url, 'select *, lease_expires_at > now() as lease_holds from runs where id = $1', [runId]))[0];

test.before(async () => {
  db = await createTestDatabase('liveness');
  model = await startModelServer({
    script: (request) => {
      const text = JSON.stringify(request.body?.messages ?? []);
      return [...scripts.entries()].find(([key]) => text.includes(key))?.[1].shift();
    },
  });
  ({ env, control, client, agentId, sessionId } = await startProcessCluster(db, model, { prefix: 'liveness', agent: { name: 'lively' } }));
  workers.push(await spawnService('worker', env), await spawnService('worker', env));
});
test.after(async () => {
  for (const p of [...workers, control]) p?.kill('SIGKILL');
  await model?.close();
  await db?.drop();
});

test('kill -9 of the lease holder: the run is requeued and running elsewhere before its 30 s lease would have expired', async () => {
  scripts.set('kill me early', [{ type: 'hang', after: ['partial '] }, { type: 'text', text: ['taken ', 'over'] }]);
  const thread = (await client.post(`/api/v1/sessions/${sessionId}/threads`, {})).body.id;
  const before = model.requests.length;
  const posted = await client.post(`/api/v1/threads/${thread}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'kill me early' }] } }, { 'idempotency-key': `${thread}-kill` });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const runId = posted.body.run.id as string;
  await until(() => model.requests.length, (n) => n > before);
  const owned = await runRow(runId);
  const registered = await query(db.url, 'select 1 from worker_sessions where worker_id = $1', [owned.lease_owner]);
  assert.is(registered.length, 1, 'the lease holder registered its database session');
  const victim = workers.find((w) => w.child.pid === pidOf(owned.lease_owner))!;
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  await victim.exited;
  const moved = await until(() => runRow(runId), (r) => r.status === 'running' && r.attempts === 2 && r.lease_owner && pidOf(r.lease_owner) !== victim.child.pid, 10_000);
  const tookMs = Date.now() - killedAt;
  const first = (await query<any>(db.url, `select outcome, charged, ended_at < $2::timestamptz as before_lease from run_attempts where run_id = $1 and number = 1`, [runId, owned.lease_expires_at]))[0];
  assert.is(first.outcome, 'expired');
  assert.is(first.charged, true);
  assert.ok(first.before_lease, 'the dead attempt ended before its lease would have expired');
  assert.ok(tookMs < 5_000, `running elsewhere ${tookMs} ms after the kill`);
  assert.ok(moved.lease_holds);
  const done = await until(() => runRow(runId), (r) => r.status === 'completed' || r.status === 'failed', 20_000);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'taken over');
  workers.splice(workers.indexOf(victim), 1);
});

test('a worker whose database session is cut (its LISTEN connection terminated) ends its attempt at once; the run completes once, under a new attempt', async () => {
  scripts.set('cut my session', [{ type: 'hang', after: ['partial '] }, { type: 'text', text: ['after ', 'the cut'] }]);
  const thread = (await client.post(`/api/v1/sessions/${sessionId}/threads`, {})).body.id;
  const before = model.requests.length;
  const posted = await client.post(`/api/v1/threads/${thread}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'cut my session' }] } }, { 'idempotency-key': `${thread}-cut` });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const runId = posted.body.run.id as string;
  await until(() => model.requests.length, (n) => n > before);
  const owned = await runRow(runId);
  const holder = workers.find((w) => w.child.pid === pidOf(owned.lease_owner))!;
  // The worker's LISTEN connection holds its session lock (application_name svc-service:listen).
  const cut = await query<{ pid: number }>(
    db.url,
    `select pg_terminate_backend(l.pid) as cut, l.pid from pg_locks l
      where l.locktype = 'advisory' and l.objsubid = 1 and l.granted
        and ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('svc-worker:' || $1, 0)`,
    [owned.lease_owner],
  );
  assert.ok(cut.length >= 1, 'found the worker\'s session');
  await until(() => holder.output(), (out) => out.includes('worker session lost'), 5_000);
  const done = await until(() => runRow(runId), (r) => r.status === 'completed' || r.status === 'failed', 20_000);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'after the cut');
  assert.is(done.attempts, 2);
  assert.is(holder.child.exitCode, null, 'the worker process lives on');
  const attempts = await query<any>(db.url, `select number, outcome, ended_at is not null as ended from run_attempts where run_id = $1 order by number`, [runId]);
  assert.equal(attempts.map((a) => [a.number, a.ended]), [[1, true], [2, true]]);
  assert.is(attempts[1].outcome, 'completed');
});

test('the full expire_leases pass forgets the registration of a dead worker, and only that one', async () => {
  const session = new pg.Client({ connectionString: db.url });
  await session.connect();
  try {
    // The control process's own full pass may have done it already (every 30 s): either way
    // only the live worker stays registered.
    await forgetLostWorkerSessions(session, 100);
    const left = await query<{ worker_id: string }>(db.url, 'select worker_id from worker_sessions');
    assert.equal(left.map((r) => pidOf(r.worker_id)), [workers[0]!.child.pid]);
  } finally {
    await session.end();
  }
});

test.run();
