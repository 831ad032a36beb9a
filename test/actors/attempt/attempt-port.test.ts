// The attempt's end of the port: deltas posted in one event-loop turn are coalesced, the first
// is never held, and nothing overtakes a held delta.
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AttemptPort } from '../../../actors/attempt/attempt-port.js';
import type { AttemptMessage } from '../../../actors/attempt/index.js';

const test = suite('actors/attempt/attempt-port');

/** Every message already delivered to `port`, read synchronously. */
function drain(port: MessagePort): AttemptMessage[] {
  const out: AttemptMessage[] = [];
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) out.push(m.message as AttemptMessage);
  return out;
}

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

test.run();
