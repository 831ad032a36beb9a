// Role all, worker.slots = 2: an inbox input reserves a slot of this process's worker before its
// statement knows whether the thread is idle (so that a run it starts is claimed at acceptance
// and its attempt starts at once, even before the commit). An input to a thread whose run
// executes here will queue behind that run: it takes no slot (WorkerHost.reserve), so an input
// to another, idle thread still finds one while the first input's statement waits.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { query } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { keyedScript, newThread, requestsMentioning, send, speculationCounts, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import type { ModelScript } from '../../../bench/model-server.js';

const test = suite('actors/run-engine/slot-reservation');
let f: RunFixture;
let metricsPort = 0;
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  metricsPort = await freePort();
  f = await startRunFixture({ script: keyedScript(scripts), env: { SVC_WORKER__SLOTS: '2', SVC_METRICS__ENABLED: 'true', SVC_METRICS__PORT: String(metricsPort) } });
});
test.after(async () => {
  await f?.stop();
});

const adopted = async (): Promise<number> => (await speculationCounts(metricsPort)).adopted;
const requestsFor = (key: string) => requestsMentioning(f, key);

test('an input queued behind a run executing here holds no slot: an idle thread\'s input starts meanwhile', async () => {
  const busy = await newThread(f);
  const idle = await newThread(f);
  let answerBusy!: () => void;
  scripts.set('slot-busy-first', [{ type: 'text', text: 'busy answer', hold: new Promise<void>((r) => (answerBusy = r)) }]);
  scripts.set('slot-busy-second', [{ type: 'text', text: 'second answer' }]);
  scripts.set('slot-idle-first', [{ type: 'text', text: 'idle answer' }]);
  // The busy thread's run executes here (one of the two slots), its model answer held.
  const first = await send(f, 'slot-busy-first', {}, busy);
  assert.is(first.status, 201, JSON.stringify(first.body));
  await until(() => requestsFor('slot-busy-first').length, (n) => n === 1, 5000);
  // Its next input waits in its statement for the thread's row lock, held here: with a slot
  // reserved for it, no slot would be left for anything else until the lock is released.
  const lock = new pg.Client({ connectionString: f.db.url });
  await lock.connect();
  let second: ReturnType<typeof send> | null = null;
  try {
    await lock.query('begin');
    await lock.query('select 1 from threads where id = $1 for update', [busy]);
    second = send(f, 'slot-busy-second', {}, busy);
    await until(
      () => query<{ n: number }>(f.db.url, `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
      (rows) => rows[0]!.n >= 1,
      5000,
    );
    // The idle thread's input: the free slot is its own, its attempt speculated and adopted.
    const before = await adopted();
    const other = await send(f, 'slot-idle-first', {}, idle);
    assert.is(other.status, 201, JSON.stringify(other.body));
    const done = await waitForRun(f, other.body.run.id);
    assert.is(done.status, 'completed', 'the idle thread\'s run completed while the busy thread\'s input still waited');
    assert.is(await adopted(), before + 1, 'started at acceptance, in the slot the waiting input did not take');
    assert.is(requestsFor('slot-idle-first').length, 1);
  } finally {
    await lock.query('commit').catch(() => undefined);
    await lock.end();
    answerBusy();
  }
  const queued = await second!;
  assert.is(queued.status, 201, JSON.stringify(queued.body));
  assert.is(queued.body.run, null, 'queued behind the running run');
  assert.is((await waitForRun(f, first.body.run.id)).status, 'completed');
  // The queued input's run starts when the first seals, and completes with its own answer.
  await until(
    () => query<{ status: string }>(f.db.url, `select status from runs where source_entry_id = $1`, [queued.body.entry.id]),
    (rows) => rows[0]?.status === 'completed',
    10_000,
  );
});

test.run();
