import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { poolShape } from '../../../actors/worker/worker-host.js';

// The attempt pool leaves one core to the worker process's main thread, and its threads ×
// tasks per thread is worker.slots exactly (the host never runs more attempts than slots, and
// Piscina's capacity is exactly that).
const test = suite('actors/worker/pool-shape');

test('one core is left to the main thread, with at least one attempt thread', () => {
  assert.equal(poolShape(64, 1), { maxThreads: 1, concurrentTasksPerWorker: 64 });
  assert.equal(poolShape(64, 2), { maxThreads: 1, concurrentTasksPerWorker: 64 });
  assert.equal(poolShape(64, 5), { maxThreads: 4, concurrentTasksPerWorker: 16 });
  assert.equal(poolShape(8, 9), { maxThreads: 8, concurrentTasksPerWorker: 1 });
});

test('threads divide slots exactly, and never exceed them', () => {
  assert.equal(poolShape(64, 8), { maxThreads: 4, concurrentTasksPerWorker: 16 });
  assert.equal(poolShape(9, 8), { maxThreads: 3, concurrentTasksPerWorker: 3 });
  assert.equal(poolShape(7, 8), { maxThreads: 7, concurrentTasksPerWorker: 1 });
  assert.equal(poolShape(1, 16), { maxThreads: 1, concurrentTasksPerWorker: 1 });
  for (let slots = 1; slots <= 40; slots++) {
    for (let cores = 1; cores <= 12; cores++) {
      const { maxThreads, concurrentTasksPerWorker } = poolShape(slots, cores);
      assert.ok(maxThreads >= 1 && maxThreads <= Math.max(1, cores - 1), `${slots} slots, ${cores} cores: ${maxThreads} threads`);
      assert.is(maxThreads * concurrentTasksPerWorker, slots);
    }
  }
});

test.run();
