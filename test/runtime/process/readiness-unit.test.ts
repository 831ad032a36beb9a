import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Readiness } from '../../../runtime/index.js';

const test = suite('runtime/process/readiness-unit');

test('not ready before startup; ready after; a failed task makes it not ready for good', () => {
  const readiness = new Readiness();
  assert.is(readiness.isRuntimeReady(), false);
  readiness.markStarted();
  assert.is(readiness.isRuntimeReady(), true);
  readiness.markFailed('sweeps');
  assert.is(readiness.isRuntimeReady(), false);
  assert.equal(readiness.failedTasks(), ['sweeps']);
});

test('a watched loop that stops beating past its allowed silence turns the process not ready', () => {
  let now = 1_000;
  const readiness = new Readiness(() => now);
  readiness.markStarted();
  const beat = readiness.watch('worker.claim', 30_000);
  now += 29_000;
  assert.is(readiness.isRuntimeReady(), true);
  beat();
  now += 29_000;
  assert.is(readiness.isRuntimeReady(), true, 'a beat restarts the allowance');
  now += 2_000;
  assert.is(readiness.isRuntimeReady(), false);
  assert.equal(readiness.failedTasks(), ['worker.claim']);
  beat();
  assert.is(readiness.isRuntimeReady(), true, 'a loop that comes back is ready again');
  readiness.unwatch('worker.claim');
  now += 100_000;
  assert.is(readiness.isRuntimeReady(), true, 'an unwatched loop (stopped on purpose) is not checked');
});

test.run();
