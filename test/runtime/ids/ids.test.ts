// Ids (runtime/ids): kind-prefixed, time-sortable, 80 random bits from a pooled CSPRNG buffer —
// across many pool refills (4 KiB = 409 ids each) no random part repeats.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newId } from '../../../runtime/index.js';

const test = suite('runtime/ids');

test('ids are well formed, unique across pool refills, and sort by creation time', () => {
  const ids = Array.from({ length: 20_000 }, () => newId('run'));
  for (const id of ids.slice(0, 500)) assert.match(id, /^run_[0-9a-hjkmnp-tv-z]{26}$/);
  assert.is(new Set(ids).size, ids.length, 'no id twice');
  assert.is(new Set(ids.map((id) => id.slice(14))).size, ids.length, 'no random part twice');
  const early = newId('run', 1_000_000);
  const late = newId('run', 2_000_000);
  assert.ok(early < late, 'a later creation time sorts later');
});

test.run();
