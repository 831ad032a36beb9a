// The attempt pool's links (actors/attempt/attempt-pool.ts, attempt-link.ts): every attempt of a
// thread talks to the host over the thread's one link under its own channel number. Real
// Piscina threads, the local model server.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelServer, ModelServerOptions } from '../../../bench/model-server.js';
import { AttemptPool, attemptThreadExecArgv, forEachAttemptMessage, type AttemptMessage, type AttemptPost, type DoneMessage } from '../../../actors/attempt/index.js';
import { assertProtocol, attemptPool, modelServers, completedItems, makeStart, startAttempt } from './attempt-harness.js';

const test = suite('actors/attempt/attempt-pool');
const pool = attemptPool();
const pools: AttemptPool[] = [pool];
const servers = modelServers();

const server = (options: ModelServerOptions): Promise<ModelServer> => servers.start(options);

test.after(async () => {
  await servers.closeAll();
  await Promise.all(pools.map((p) => p.destroy()));
});

/** The text of the last user message a request carried (the attempt's input). */
function inputOf(body: { messages?: Array<{ role: string; content: unknown }> }): string {
  const last = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const content = last?.content;
  return Array.isArray(content) ? String((content[0] as { text?: unknown })?.text ?? '') : String(content ?? '');
}

test('a cancel sent before the attempt has posted anything is held for it and reaches it', async () => {
  // 50 tokens 20 ms apart: a second at least, were the cancel lost.
  const model = await server({ tokens_per_response: 50, token_delay_ms: 20 });
  const run = startAttempt(pool, makeStart(model));
  // At once: the channel is not bound to a thread yet (the attempt has not posted).
  run.send({ type: 'cancel' });
  const done = await run.done;
  assert.is(done.outcome, 'cancelled');
  const deltas = run.messages.filter((m) => m.type === 'item.delta').length;
  assert.ok(deltas < 50, `${deltas} deltas: the cancel came late or not at all`);
});

test('attempts sharing the threads and their links each receive their own messages only', async () => {
  const model = await server({ script: (request) => ({ type: 'text', text: ['re: ', inputOf(request.body)] }) });
  const two = new AttemptPool({ maxThreads: 2, minThreads: 2, concurrentTasksPerWorker: 4, execArgv: attemptThreadExecArgv() });
  pools.push(two);
  const runs = Array.from({ length: 8 }, (_, i) =>
    startAttempt(two, makeStart(model, { run: { ...makeStart(model).run, id: `run_${i}`, attempt_id: `att_${i}`, input: { content: [{ type: 'text', text: `input ${i}` }] } } })),
  );
  const dones = await Promise.all(runs.map((r) => r.done));
  dones.forEach((done, i) => {
    assert.is(done.outcome, 'completed');
    assert.is(done.output, `re: input ${i}`);
    assertProtocol(runs[i]!.messages, 1);
    const texts = completedItems(runs[i]!.messages).map((m) => JSON.stringify(m.item.content));
    assert.equal(texts, [JSON.stringify({ content: [{ type: 'text', text: `input ${i}` }] }), JSON.stringify({ text: `re: input ${i}` })]);
  });
});

test('a closed channel drops what its attempt posts later; an attempt for the same attempt id after it is not affected', async () => {
  const slow = await server({ tokens_per_response: 40, token_delay_ms: 20 });
  const start = makeStart(slow);
  // The first attempt, as a discarded speculation is: cancelled and closed while it streams.
  const first = pool.run(start);
  const seen: AttemptMessage[] = [];
  let firstDelta!: () => void;
  const delta = new Promise<void>((resolve) => (firstDelta = resolve));
  first.channel.on('message', (post: AttemptPost) =>
    forEachAttemptMessage(post, (m) => {
      seen.push(m);
      if (m.type === 'item.delta') firstDelta();
    }),
  );
  await delta;
  first.channel.postMessage({ type: 'cancel' });
  first.channel.close();
  const closedAt = seen.length;
  // The second, with the same start (the same attempt id), on the same thread.
  const fast = await server({ script: [{ type: 'text', text: 'second' }] });
  const second = startAttempt(pool, { ...start, model: { ...start.model, base_url: fast.url } });
  const done: DoneMessage = await second.done;
  await first.task;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'second');
  assertProtocol(second.messages, 1);
  assert.ok(!second.messages.some((m) => m.type === 'item.delta' && m.delta.text === 'tok '), "the closed attempt's deltas reached the new one");
  assert.is(seen.length, closedAt, 'nothing reaches a closed channel');
});

test('a thread that dies fails its attempt; its replacement brings its own link and runs the next attempts', async () => {
  const slow = await server({ tokens_per_response: 50, token_delay_ms: 20 });
  const fast = await server({ script: [{ type: 'text', text: 'after' }] });
  const one = new AttemptPool({ maxThreads: 1, minThreads: 1, concurrentTasksPerWorker: 2, execArgv: attemptThreadExecArgv() });
  pools.push(one);
  const victim = startAttempt(one, makeStart(slow));
  await victim.waitFor((m) => m.type === 'item.delta');
  // The pool's only thread ends (as a crash would end it): Piscina replaces it.
  const threads = (one as unknown as { pool: { threads: Array<{ terminate(): Promise<number> }> } }).pool.threads;
  await threads[0]!.terminate();
  await victim.done.then(
    (done) => assert.unreachable(`the attempt on the dead thread ended ${done.outcome}`),
    (error: unknown) => assert.match(String(error), /exit|terminat/i),
  );
  const next = startAttempt(one, makeStart(fast));
  const done = await next.done;
  assert.is(done.outcome, 'completed');
  assert.is(done.output, 'after');
  assertProtocol(next.messages, 1);
});

test.run();
