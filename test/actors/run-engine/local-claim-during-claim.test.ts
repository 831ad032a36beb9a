// Role all: a claim statement in flight keeps one free slot out of its request (WorkerHost.claim),
// so an input accepted meanwhile is still claimed in its own transaction (reserve) instead of
// waiting for the NOTIFY and the next claim. Made deterministic by holding the runs table: the
// poll's claim blocks on it (in flight), then a POST reserves its slot before its own statement
// blocks on the same lock; both go on when the lock is released.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/local-claim-during-claim');
let f: RunFixture;

test.before(async () => {
  f = await startRunFixture({ env: { SVC_WORKER__SLOTS: '2', SVC_WORKER__POLL_SECONDS: '1' } });
});
test.after(async () => {
  await f?.stop();
});

test('an input accepted while a claim is in flight is claimed by its own transaction', async () => {
  const holder = new pg.Client({ connectionString: f.db.url });
  await holder.connect();
  let posting: ReturnType<typeof send> | undefined;
  try {
    await holder.query('begin');
    await holder.query('lock table runs in access exclusive mode');
    // A poll (every second) starts a claim now, and it waits for the lock: in flight.
    await new Promise((r) => setTimeout(r, 1_500));
    posting = send(f, 'accepted-during-a-claim');
    await new Promise((r) => setTimeout(r, 500));
    await holder.query('commit');
  } finally {
    if (posting === undefined) await holder.query('rollback').catch(() => undefined);
    await holder.end();
  }
  const posted = await posting!;
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  assert.is(posted.body.run.status, 'running', 'claimed in the accepting transaction, beside the claim in flight');
  assert.is((await waitForRun(f, posted.body.run.id)).status, 'completed');
});

test.run();
