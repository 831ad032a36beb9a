// The start of a run a worker's claim takes (claimRuns: the run was accepted while no slot was
// free; in control + worker, every run), on the hot path (issue #18):
// - its thread's pending steer entries are read only when the claim saw one (steerPending); a
//   steer committed after the claim's snapshot is announced by a NOTIFY naming the run, kept by
//   the host until the run is hosted. What must hold: a steer sent while the run waited for a
//   slot — longer than the host keeps early NOTIFYs (white-box: cleared here) — still reaches
//   the run, through the claim's answer alone;
// - the thread's history is not read when this process holds exactly the run's history_start
//   messages of it (it sealed the thread's previous run): a history only grows at its end.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineFor } from '../../../actors/index.js';
import type { RecordedTransaction } from '../../../bench/pg-transaction-counter.js';
import { startCountedDatabase, type CountedDatabase } from '../../support/counted-database.js';
import { keyedScript, newThread, send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import type { ModelScript } from '../../../bench/model-server.js';

const test = suite('actors/run-engine/claimed-start');
let f: RunFixture;
let counted: CountedDatabase;
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  counted = await startCountedDatabase('claimed');
  f = await startRunFixture({
    databaseUrl: counted.proxiedUrl,
    script: keyedScript(scripts),
    env: { SVC_WORKER__SLOTS: '1' },
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
  });
});
test.after(async () => {
  await f?.stop();
  await counted?.stop();
});

/** Holds the only slot with a run on another thread until the returned release is called. */
async function holdTheSlot(key: string): Promise<{ runId: string; release: () => void }> {
  let release!: () => void;
  scripts.set(key, [{ type: 'text', text: 'held', hold: new Promise<void>((r) => (release = r)) }]);
  const holding = await send(f, key, {}, await newThread(f));
  await until(() => f.client.get(`/api/v1/runs/${holding.body.run.id}`), (r) => r.body.status === 'running', 5000);
  return { runId: holding.body.run.id as string, release };
}

const having = (transactions: RecordedTransaction[], marker: string): RecordedTransaction[] => transactions.filter((t) => t.statements.some((s) => s.includes(marker)));

test('a claimed run on a thread whose last run sealed here reads neither its history nor steer entries', async () => {
  const thread = await newThread(f);
  scripts.set('first-here', [{ type: 'text', text: 'first answer' }]);
  const first = await send(f, 'first-here', {}, thread);
  assert.is((await waitForRun(f, first.body.run.id)).status, 'completed');
  const slot = await holdTheSlot('holds-for-history');
  try {
    scripts.set('second-claimed', [{ type: 'text', text: 'second answer' }]);
    const second = await send(f, 'second-claimed', {}, thread);
    assert.is(second.body.run.status, 'accepted', 'no slot was free: a claim takes it');
    counted.counter.takeTransactions();
    slot.release();
    const run = await waitForRun(f, second.body.run.id);
    assert.is(run.status, 'completed', JSON.stringify(run.failure));
    const transactions = counted.counter.takeTransactions();
    assert.is(having(transactions, "set status = 'running', attempts = r.attempts + 1").length >= 1, true, 'claimed by a claim');
    assert.is(having(transactions, 'jsonb_path_query_array(message_history').length, 0, 'no history read for the attempt');
    assert.is(having(transactions, "delivery = 'steer' order by position").length, 0, 'no steer read at the attempt start');
    // And the model was given the whole history: the first exchange, then the second input.
    const request = f.model.requests.find((r) => JSON.stringify(r.body.messages).includes('second-claimed'))!;
    const texts = JSON.stringify(request.body.messages);
    assert.ok(texts.indexOf('first-here') < texts.indexOf('first answer') && texts.indexOf('first answer') < texts.indexOf('second-claimed'), texts);
  } finally {
    slot.release();
  }
  assert.is((await waitForRun(f, slot.runId)).status, 'completed');
});

test('a steer pending when a claim takes its run is read at the run\'s start', async () => {
  let release!: () => void;
  scripts.set('holds-the-slot', [{ type: 'text', text: 'held', hold: new Promise<void>((r) => (release = r)) }]);
  // Two model requests: the steer joins the second, whenever the first was sent; the first
  // answer waits a while, so the steer read at the start has long been answered by then.
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  scripts.set('steered-after-claim', [
    { type: 'tool_calls', calls: [{ id: 'call_c', name: 'echo', arguments: '{"text":"step"}' }], hold: answered },
    { type: 'text', text: 'steered answer' },
  ]);
  try {
    const holding = await send(f, 'holds-the-slot', {}, await newThread(f));
    await until(() => f.client.get(`/api/v1/runs/${holding.body.run.id}`), (r) => r.body.status === 'running', 5000);
    const thread = await newThread(f);
    const waiting = await send(f, 'steered-after-claim', {}, thread);
    assert.is(waiting.body.run.status, 'accepted', 'no slot was free');
    const steer = await send(f, 'steer-note: mention violet', { delivery: 'steer' }, thread);
    assert.is(steer.status, 201, JSON.stringify(steer.body));
    assert.is(steer.body.run, null, 'the steer is for the accepted run');
    // Its NOTIFY has come and is forgotten, as after EARLY_STEER_MS.
    await new Promise((r) => setTimeout(r, 200));
    for (const host of [...engineFor(f.service.services).localHosts] as unknown as Array<{ earlySteers: Map<string, number> }>) host.earlySteers.clear();
    const before = f.model.requests.length;
    release();
    setTimeout(answer, 500);
    assert.is((await waitForRun(f, holding.body.run.id)).status, 'completed');
    const run = await waitForRun(f, waiting.body.run.id);
    assert.is(run.status, 'completed', JSON.stringify(run.failure));
    const entry = (await f.client.get(`/api/v1/threads/${thread}/inbox/${steer.body.entry.id}`)).body;
    assert.is(entry.status, 'incorporated', JSON.stringify(entry));
    assert.is(entry.assigned_run_id, run.id);
    assert.match(JSON.stringify(f.model.requests.slice(before).map((r) => r.body.messages)), /steer-note: mention violet/);
  } finally {
    release?.();
  }
});

test.run();
