// Inline checkpoints (migration 0016, objects.inline_checkpoint_max_bytes): a small checkpoint
// is stored in run_checkpoints in its step's transaction; a larger one is an object as before.
// Replaced inline checkpoints are deleted in the transaction that replaced them, never through
// the checkpoint_cleanup outbox; a run whose checkpoint is an object (an earlier release's)
// still resumes from it. A run that ends keeps no checkpoint: its last step stores none and the
// one it had is released with the pointer cleared (nothing continues an ended run).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript } from '../../../bench/model-server.js';
import { query } from '../../support/database.js';
import { keyedScript, send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/run-engine/inline-checkpoints');
const THRESHOLD = 8192;
let f: RunFixture;
const scripts = new Map<string, ModelScript[]>();

test.before(async () => {
  f = await startRunFixture({
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: { echo: { permission: 'ask' } } } } },
    script: keyedScript(scripts),
    env: { SVC_OBJECTS__INLINE_CHECKPOINT_MAX_BYTES: String(THRESHOLD) },
  });
});
test.after(async () => {
  await f?.stop();
});

const newThread = async (): Promise<string> => (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id;
const runRow = async (id: string) => (await query<{ checkpoint_key: string | null; checkpoint_seq: number }>(f.db.url, 'select checkpoint_key, checkpoint_seq from runs where id = $1', [id]))[0]!;
const inlineRows = async (id: string) => query<{ key: string; size: number }>(f.db.url, 'select key, length(state)::int as size from run_checkpoints where run_id = $1', [id]);
const cleanups = async () => query<{ payload: { key?: string } }>(f.db.url, `select payload from outbox where kind = 'checkpoint_cleanup'`);
const objectKeys = async (runId: string) => (await f.service.services.objects.list(`runs/${runId}/checkpoints/`)).keys;

async function runTo(key: string, script: ModelScript[], status: string): Promise<any> {
  scripts.set(key, script);
  const posted = await send(f, key, {}, await newThread());
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  const run = await waitForRun(f, posted.body.run.id);
  assert.is(run.status, status, JSON.stringify(run.failure));
  return run;
}

test('small checkpoints are stored inline: the pointer names an inline row, no object is written, replaced rows are gone without the outbox', async () => {
  const waiting = await runTo('inline-small', [{ type: 'tool_calls', calls: [{ id: 'c1', name: 'echo', arguments: '{"text":"small"}' }] }, { type: 'text', text: 'small done' }], 'waiting');
  const before = await runRow(waiting.id);
  assert.ok(before.checkpoint_key!.startsWith('inline:runs/'), before.checkpoint_key!);
  assert.equal((await inlineRows(waiting.id)).map((r) => r.key), [before.checkpoint_key], 'only the current checkpoint has a row');
  assert.equal(await objectKeys(waiting.id), []);
  const successor = await f.client.post(`/api/v1/runs/${waiting.id}/resume`, { approvals: { c1: { action: 'approve' } } }, { 'idempotency-key': 'inline-resume-1' });
  assert.is(successor.status, 201, JSON.stringify(successor.body));
  const done = await waitForRun(f, successor.body.id);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'small done');
  // The successor continued from the predecessor's inline checkpoint, which stays with it.
  assert.equal((await inlineRows(waiting.id)).map((r) => r.key), [before.checkpoint_key]);
  const after = await runRow(done.id);
  assert.is(after.checkpoint_key, null, 'an ended run points to no checkpoint');
  assert.equal(await inlineRows(done.id), [], 'and keeps no inline row');
  assert.ok((await cleanups()).every((c) => !String(c.payload.key ?? '').startsWith('inline:')), 'the outbox never names an inline checkpoint');
});

test('a checkpoint over the threshold is an object; the inline one it replaced is deleted in the same transaction', async () => {
  const big = 'x'.repeat(THRESHOLD * 2);
  const waiting = await runTo('inline-grows', [
    { type: 'tool_calls', calls: [{ id: 'g1', name: 'echo', arguments: '{"text":"tiny"}' }] },
    // The successor's answer is large and waits again: its checkpoint is kept, as an object.
    { type: 'tool_calls', calls: [{ id: 'g2', name: 'echo', arguments: '{"text":"again"}' }], text: big },
    { type: 'text', text: 'grown done' },
  ], 'waiting');
  const first = await runRow(waiting.id);
  assert.ok(first.checkpoint_key!.startsWith('inline:'));
  const successor = await f.client.post(`/api/v1/runs/${waiting.id}/resume`, { approvals: { g1: { action: 'approve' } } }, { 'idempotency-key': 'inline-resume-2' });
  const grown = await waitForRun(f, successor.body.id);
  assert.is(grown.status, 'waiting', JSON.stringify(grown.failure));
  const last = await runRow(grown.id);
  assert.ok(last.checkpoint_key!.startsWith(`runs/${grown.id}/checkpoints/`), last.checkpoint_key!);
  assert.ok(await f.service.services.objects.get(last.checkpoint_key!), 'the large checkpoint is in the object store');
  assert.equal(await inlineRows(grown.id), [], 'no inline row of the successor is left behind');
  // Its successor ends: its last step stores nothing and releases the object through the outbox.
  const next = await f.client.post(`/api/v1/runs/${grown.id}/resume`, { approvals: { g2: { action: 'approve' } } }, { 'idempotency-key': 'inline-resume-2b' });
  const done = await waitForRun(f, next.body.id);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is((await runRow(done.id)).checkpoint_key, null);
  const released = (await cleanups()).map((c) => c.payload.key);
  const left = await objectKeys(done.id);
  assert.ok(left.every((k) => released.includes(k)), `every object of the ended run is released: ${JSON.stringify({ left, released })}`);
  assert.equal(await inlineRows(done.id), []);
});

test('a waiting run whose checkpoint is an object (written by an earlier release) still resumes from it', async () => {
  const waiting = await runTo('inline-legacy', [{ type: 'tool_calls', calls: [{ id: 'l1', name: 'echo', arguments: '{"text":"legacy"}' }] }, { type: 'text', text: 'legacy done' }], 'waiting');
  const inline = await runRow(waiting.id);
  // Move the checkpoint to where an earlier release kept it: an object under the plain key.
  const bytes = (await query<{ state: Buffer }>(f.db.url, 'select state from run_checkpoints where key = $1', [inline.checkpoint_key]))[0]!.state;
  const objectKey = inline.checkpoint_key!.slice('inline:'.length);
  await f.service.services.objects.put(objectKey, bytes, { contentType: 'application/x-msgpack' });
  await query(f.db.url, 'update runs set checkpoint_key = $2 where id = $1', [waiting.id, objectKey]);
  await query(f.db.url, 'delete from run_checkpoints where run_id = $1', [waiting.id]);
  const successor = await f.client.post(`/api/v1/runs/${waiting.id}/resume`, { approvals: { l1: { action: 'approve' } } }, { 'idempotency-key': 'inline-resume-3' });
  const done = await waitForRun(f, successor.body.id);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  assert.is(done.output, 'legacy done');
  assert.ok(await f.service.services.objects.get(objectKey), "the predecessor's object stays with the predecessor");
  const tool = f.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes('inline-legacy')).at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
  assert.ok(tool, 'the successor continued the conversation of the object checkpoint');
});

test.run();
