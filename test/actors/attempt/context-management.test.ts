// Context management inside the attempt task (real Piscina pool, local model server): what
// the checkpoint and history_append carry after a compaction, continuing from a summary in
// the thread history, old checkpoints, a failed or cancelled summary.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript, ModelServer, RecordedRequest } from '../../../bench/model-server.js';
import { assertProtocol, attemptPool, modelServers, checkpoints, continueFrom, decodeState, itemsOfKind, makeStart, startAttempt } from './attempt-harness.js';

const test = suite('actors/attempt/context-management');
const pool = attemptPool();
const servers = modelServers();
const SMALL = { context_window_tokens: 2000, compact_threshold: 0.5, proactive_context_management_threshold: 0.4 };
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
// Two earlier turns of ~1,000 estimated tokens: the next request is past 1,000 (0.5 × 2,000).
const HISTORY = [
  { role: 'user', content: 'earlier question' },
  { role: 'assistant', content: words('older', 450) },
];

const isSummarising = (r: RecordedRequest): boolean => String(r.body?.messages?.[0]?.content ?? '').startsWith('You compact the conversation');

const server = (script: (request: RecordedRequest) => ModelScript | undefined): Promise<ModelServer> => servers.start({ script });

test.after(async () => {
  await servers.closeAll();
  await pool.destroy();
});

test('the compacted conversation is checkpointed before the request, and history_append starts with the summary', async () => {
  const model = await server((r) => (isSummarising(r) ? { type: 'text', text: 'the summary' } : { type: 'text', text: 'answer' }));
  const run = startAttempt(pool, makeStart(model, { history: HISTORY, context: SMALL }));
  const done = await run.done;
  assertProtocol(run.messages, 1);
  assert.is(done.outcome, 'completed');
  const [afterCompaction, afterAnswer] = checkpoints(run.messages);
  const state = decodeState(afterCompaction!);
  assert.is(state.messages[0].compaction.replaced_messages, 2);
  assert.is(state.messages[0].compaction.run_id, 'run_1');
  assert.is(state.messages[1].content[0].text, 'Hello', 'the run input follows the summary');
  assert.is(state.history_start, 0);
  assert.equal(state.context, { compactions: 1, fresh: true });
  assert.is(state.usage.compaction_requests, 1);
  assert.equal(decodeState(afterAnswer!).context, { compactions: 1, fresh: false }, 'a model response clears fresh');
  const compaction = itemsOfKind(run.messages, 'compaction')[0]!;
  assert.is(state.messages[0].compaction.item_id, compaction.item.id);
  assert.ok(afterCompaction!.next_ordinal > compaction.ordinal, 'the compaction item commits with that checkpoint');
  // The thread gets the whole compacted conversation, summary first, so later runs start there.
  const append = done.history_append as Array<Record<string, any>>;
  assert.is(append.length, 3);
  assert.ok(append[0]!.compaction, 'the summary marker reaches the thread history');
  assert.match(String(append[0]!.content), /the summary/);
  assert.is(append[2]!.content, 'answer');
  // The item is open while the summary is written, and completes with it.
  const started = run.messages.find((m) => m.type === 'item.started' && m.ordinal === compaction.ordinal);
  assert.ok(started && started.type === 'item.started' && started.item.content.trigger === 'threshold' && started.item.content.summary === undefined);
  assert.is(compaction.item.content.summary, 'the summary');
});

test('a run whose thread history holds a summary sends the conversation from the summary on', async () => {
  const model = await server(() => ({ type: 'text', text: 'fine' }));
  const history = [
    { role: 'user', content: 'a very old question that was compacted' },
    { role: 'assistant', content: 'a very old answer' },
    { role: 'user', content: '[Summary …]\n\nsummary text', compaction: { item_id: 'itm_x', run_id: 'run_0', replaced_messages: 2 } },
    { role: 'user', content: 'kept question' },
    { role: 'assistant', content: 'kept answer' },
  ];
  const run = startAttempt(pool, makeStart(model, { history }));
  const done = await run.done;
  assert.is(done.outcome, 'completed');
  const sent = model.requests[0]!.body.messages.map((m: { content: unknown }) => JSON.stringify(m.content));
  assert.not.ok(sent.some((c: string) => c.includes('very old')), 'nothing before the summary is sent');
  assert.ok(sent[1].includes('summary text'));
  assert.is((done.history_append as unknown[]).length, 2, 'only this run’s messages are appended');
});

test('a checkpoint written before context management existed still continues', async () => {
  const model = await server(() => ({ type: 'text', text: 'continued' }));
  const first = startAttempt(pool, makeStart(model));
  await first.done;
  const old = checkpoints(first.messages).at(-1)!;
  const { Packr } = await import('msgpackr');
  const packr = new Packr({ useRecords: false });
  const state = decodeState(old);
  delete state.context;
  state.final = null;
  const legacy = { ...old, state: new Uint8Array(packr.pack(state)) };
  const again = startAttempt(pool, continueFrom(makeStart(model), legacy));
  const done = await again.done;
  assert.is(done.outcome, 'completed', JSON.stringify(done.failure));
});

test('a failed summary replaces nothing: the item records the error and the request goes as it was', async () => {
  const model = await server((r) => (isSummarising(r) ? { type: 'http_error', status: 400, message: 'summaries are refused today' } : { type: 'text', text: 'answered anyway' }));
  const run = startAttempt(pool, makeStart(model, { history: HISTORY, context: SMALL }));
  const done = await run.done;
  assertProtocol(run.messages, 1);
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'answered anyway');
  const compaction = itemsOfKind(run.messages, 'compaction')[0]!;
  assert.match(String(compaction.item.content.error), /summaries are refused today/);
  assert.is(compaction.item.content.replaced_messages, 0);
  const agent = model.requests.filter((r) => !isSummarising(r));
  assert.ok(JSON.stringify(agent[0]!.body.messages).includes('older0'), 'the request was sent uncompacted');
});

test('cancel while the summary is written ends the attempt as cancelled', async () => {
  const model = await server((r) => (isSummarising(r) ? { type: 'hang', after: ['partial summary'] } : { type: 'text', text: 'never' }));
  const run = startAttempt(pool, makeStart(model, { history: HISTORY, context: SMALL }));
  await run.waitFor((m) => m.type === 'item.started' && m.item.kind === 'compaction');
  run.send({ type: 'cancel' });
  const done = await run.done;
  assert.is(done.outcome, 'cancelled');
  assert.is(model.requests.filter((r) => !isSummarising(r)).length, 0, 'no agent request after a cancelled compaction');
});

test.run();
