// The attempt's end of the port: the messages of one event-loop turn go as one post (a batch),
// deltas posted in one turn are coalesced, the first delta, a host request and `done` are never
// held, and nothing overtakes a held delta.
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AttemptPort } from '../../../actors/attempt/attempt-port.js';
import { forEachAttemptMessage, type AttemptMessage, type AttemptPost } from '../../../actors/attempt/index.js';

const test = suite('actors/attempt/attempt-port');

/** Every post already delivered to `port`, read synchronously. */
function posts(port: MessagePort): AttemptPost[] {
  const out: AttemptPost[] = [];
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) out.push(m.message as AttemptPost);
  return out;
}

/** Every message already delivered to `port`, batches unwrapped, read synchronously. */
function drain(port: MessagePort): AttemptMessage[] {
  const out: AttemptMessage[] = [];
  for (const post of posts(port)) forEachAttemptMessage(post, (m) => out.push(m));
  return out;
}

const usage = { requests: 1, input_tokens: 0, output_tokens: 0 };
const item = { id: 'itm_a', kind: 'text_message' as const, content: {} };

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function open(): { host: MessagePort; attempt: AttemptPort; close: () => void } {
  const { port1, port2 } = new MessageChannel();
  const attempt = new AttemptPort(port2);
  return {
    host: port1,
    attempt,
    close: () => {
      attempt.release();
      port1.close();
    },
  };
}

test('the first delta of a turn is posted at once; later ones in the turn go as one, concatenated exactly', async () => {
  const { host, attempt, close } = open();
  attempt.post({ type: 'item.delta', ordinal: 3, delta: { text: 'Hel' } });
  assert.equal(drain(host), [{ type: 'item.delta', ordinal: 3, delta: { text: 'Hel' } }], 'not delayed');
  attempt.post({ type: 'item.delta', ordinal: 3, delta: { text: 'lo ' } });
  attempt.post({ type: 'item.delta', ordinal: 3, delta: { text: '' } });
  attempt.post({ type: 'item.delta', ordinal: 3, delta: { text: 'wörld ✓' } });
  assert.equal(drain(host), [], 'held until the turn ends');
  await nextTurn();
  assert.equal(drain(host), [{ type: 'item.delta', ordinal: 3, delta: { text: 'lo wörld ✓' } }]);
  // A new turn: its first delta goes at once again.
  attempt.post({ type: 'item.delta', ordinal: 3, delta: { text: '!' } });
  assert.equal(drain(host), [{ type: 'item.delta', ordinal: 3, delta: { text: '!' } }]);
  close();
});

test('argument deltas concatenate, and a delta of another item or any other message first posts what is held', async () => {
  const { host, attempt, close } = open();
  attempt.post({ type: 'item.delta', ordinal: 4, delta: { arguments: '{"a"' } });
  attempt.post({ type: 'item.delta', ordinal: 4, delta: { arguments: ':1' } });
  attempt.post({ type: 'item.delta', ordinal: 4, delta: { arguments: '}' } });
  attempt.post({ type: 'item.delta', ordinal: 5, delta: { arguments: '{}' } });
  attempt.post({ type: 'item.completed', ordinal: 4, item: { id: 'itm_a', kind: 'tool_call', content: {} } });
  attempt.post({ type: 'item.delta', ordinal: 5, delta: { arguments: '[' } });
  attempt.post({ type: 'done', outcome: 'completed', usage: { requests: 1, input_tokens: 0, output_tokens: 0 } });
  assert.equal(
    drain(host).map((m) => (m.type === 'item.delta' ? `${m.ordinal}:${m.delta.arguments}` : m.type)),
    ['4:{"a"', '4::1}', '5:{}', 'item.completed', '5:[', 'done'],
    'in the order posted, nothing after done',
  );
  await nextTurn();
  assert.equal(drain(host), []);
  close();
});

test("the messages of one turn go as one batch at its end; a checkpoint's bytes are moved with it", async () => {
  const { host, attempt, close } = open();
  const state = new Uint8Array([1, 2, 3]);
  attempt.post({ type: 'item.started', ordinal: 1, item });
  attempt.post({ type: 'item.completed', ordinal: 1, item });
  attempt.post({ type: 'checkpoint', seq: 1, state, next_ordinal: 2, usage, incorporated_entry_ids: [] });
  assert.equal(posts(host), [], 'held until the turn ends');
  await nextTurn();
  assert.is(state.byteLength, 0, 'the state buffer was transferred, not copied');
  const sent = posts(host);
  assert.is(sent.length, 1);
  assert.is(sent[0]?.type, 'batch');
  const messages = sent[0]?.type === 'batch' ? sent[0].messages : [];
  assert.equal(messages.map((m) => m.type), ['item.started', 'item.completed', 'checkpoint']);
  const checkpoint = messages[2];
  assert.equal(checkpoint?.type === 'checkpoint' ? [...checkpoint.state] : [], [1, 2, 3]);
  // A lone message of a turn goes as itself, not as a batch of one.
  attempt.post({ type: 'item.started', ordinal: 2, item });
  await nextTurn();
  assert.equal(posts(host).map((p) => p.type), ['item.started']);
  close();
});

test('the first delta takes what its turn queued; a host request and `done` are sent at once', async () => {
  const { host, attempt, close } = open();
  attempt.post({ type: 'item.started', ordinal: 2, item });
  attempt.post({ type: 'item.delta', ordinal: 2, delta: { text: 'Hi' } });
  assert.equal(
    posts(host).map((p) => (p.type === 'batch' ? p.messages.map((m) => m.type) : p.type)),
    [['item.started', 'item.delta']],
    'the first token is not delayed, and what preceded it goes with it',
  );
  void attempt.request('memory.recall', {}).catch(() => undefined);
  assert.equal(posts(host).map((p) => p.type), ['host.request'], 'a request is not held');
  attempt.post({ type: 'item.completed', ordinal: 2, item });
  attempt.post({ type: 'done', outcome: 'completed', usage });
  assert.equal(drain(host).map((m) => m.type), ['item.completed', 'done'], 'done and what precedes it are sent before post() returns');
  assert.throws(() => attempt.post({ type: 'item.started', ordinal: 3, item }), /already finished/);
  await nextTurn();
  assert.equal(posts(host), []);
  close();
});

test.run();
