// JsonArrayText and serializeJson (runtime/http/json-text.ts): a JSON array kept as the text the
// database sent is written into a response verbatim, and is the plain array everywhere else.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonArrayText, serializeJson } from '../../../runtime/index.js';

const test = suite('runtime/http/json-text');

test('serializeJson writes each JsonArrayText as its text, in place, and the rest as JSON.stringify does', () => {
  const history = [{ role: 'user', content: 'a "quoted" \u0001 text' }, { role: 'assistant', content: 'b' }];
  // Text as PostgreSQL writes jsonb (spaces after separators): kept byte for byte.
  const text = '[{"role": "user", "content": "a \\"quoted\\" \\u0001 text"}, {"role": "assistant", "content": "b"}]';
  const body = { entry: { id: 'e1', note: '\u0001 not a placeholder' }, thread: { id: 't1', message_history: new JsonArrayText(text, 2) }, other: [new JsonArrayText('[]', 0)] };
  const out = serializeJson(body);
  assert.ok(out.includes(`"message_history":${text}`), out);
  assert.equal(JSON.parse(out), { entry: { id: 'e1', note: '\u0001 not a placeholder' }, thread: { id: 't1', message_history: history }, other: [[]] });
  assert.is(serializeJson({ a: 1 }), JSON.stringify({ a: 1 }));
});

test('outside serializeJson a JsonArrayText serialises as its array (logs, stored records)', () => {
  const value = new JsonArrayText('[1, 2, 3]', 3);
  assert.is(JSON.stringify({ v: value }), '{"v":[1,2,3]}');
  assert.equal(value.value(), [1, 2, 3]);
  assert.is(value.length, 3);
  // A failed serialisation leaves no splice behind for the next plain JSON.stringify.
  const cyclic: Record<string, unknown> = { h: value };
  cyclic.self = cyclic;
  assert.throws(() => serializeJson(cyclic));
  assert.is(JSON.stringify({ v: value }), '{"v":[1,2,3]}');
});

test.run();
