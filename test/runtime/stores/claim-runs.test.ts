// claimRuns (runtime/stores/run-leases.ts) claims up to `limit` accepted runs in one statement
// (FOR UPDATE SKIP LOCKED) and opens each one's attempt in the same statement. Two workers
// claiming in batches at the same time over their own connections — what two worker processes
// do — never claim a run twice (RUNS.md 2: one attempt owns a run).
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimRuns, ID_PREFIX, newId } from '../../../runtime/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, type RunFixture } from '../../support/run-fixture.js';

const test = suite('runtime/stores/claim-runs');
let f: RunFixture;
const RUNS = 60;

test.before(async () => {
  // control only: no worker of the service claims; the two pools below are the workers.
  f = await startRunFixture({ role: 'control', kvUrl: 'redis://127.0.0.1:6379', env: { SVC_DATABASE__POOL_SIZE: '10' } });
});
test.after(async () => {
  await f?.stop();
});

test(`two workers claiming in batches of 7 concurrently claim each of ${RUNS} accepted runs exactly once, each with one attempt`, async () => {
  for (let i = 0; i < RUNS; i += 10) {
    await Promise.all(Array.from({ length: 10 }, async () => {
      const thread = (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id as string;
      assert.is((await send(f, 'claim me', {}, thread)).status, 201);
    }));
  }
  const pools = [new pg.Pool({ connectionString: f.db.url, max: 3 }), new pg.Pool({ connectionString: f.db.url, max: 3 })];
  try {
    // Open every connection first, so neither worker starts ahead by the time its pool takes to
    // connect (one worker could otherwise drain all 60 runs before the other's first claim).
    await Promise.all(pools.map(async (p) => Promise.all([0, 1, 2].map(async () => (await p.connect()))).then((cs) => cs.forEach((c) => c.release()))));
    const claimed: Array<{ worker: string; id: string; attempt: string }> = [];
    // Every loop's first claim finishes before any loop claims again: 6 loops × 7 ≤ 60, so both
    // workers hold runs, and the first claims of all six are in flight together.
    let firstClaims = 0;
    let releaseAll!: () => void;
    const allFirstClaimed = new Promise<void>((resolve) => (releaseAll = resolve));
    const worker = async (pool: pg.Pool, name: string): Promise<void> => {
      // Three claim loops per worker, like wake-ups racing each other inside one process.
      await Promise.all([0, 1, 2].map(async () => {
        for (let round = 0; ; round++) {
          const rows = await claimRuns(pool, name, 7, 30, () => newId(ID_PREFIX.attempt));
          for (const { run: r } of rows) claimed.push({ worker: name, id: r.id, attempt: r.current_attempt_id! });
          if (round === 0) {
            if (++firstClaims === 6) releaseAll();
            await allFirstClaimed;
          }
          if (rows.length === 0) return;
        }
      }));
    };
    await Promise.all([worker(pools[0]!, 'wrk_a'), worker(pools[1]!, 'wrk_b')]);
    const ids = claimed.map((c) => c.id);
    assert.is(new Set(ids).size, ids.length, 'no run was claimed twice');
    assert.is(ids.length, RUNS);
    assert.ok(claimed.some((c) => c.worker === 'wrk_a') && claimed.some((c) => c.worker === 'wrk_b'), 'both workers claimed');
    const rows = await query<{ id: string; attempts: number; current_attempt_id: string; lease_owner: string; n: number }>(
      f.db.url,
      `select r.id, r.attempts, r.current_attempt_id, r.lease_owner, (select count(*)::int from run_attempts a where a.run_id = r.id) as n from runs r where r.status = 'running'`,
    );
    assert.is(rows.length, RUNS);
    const byId = new Map(claimed.map((c) => [c.id, c]));
    for (const r of rows) {
      assert.is(r.attempts, 1);
      assert.is(r.n, 1, 'one attempt row per claim');
      assert.is(r.current_attempt_id, byId.get(r.id)!.attempt, 'the row names the attempt its claimer holds');
      assert.is(r.lease_owner, byId.get(r.id)!.worker);
    }
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

test.run();
