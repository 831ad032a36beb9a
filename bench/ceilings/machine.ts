// Ceiling: what the machine charges for the kernel work a durable run is made of, so figures
// from different machines (and from one machine that drifts) can be read against each other.
// The same code has measured 5.3 ms of CPU per run on one session's machine and 13 ms on
// another's whose pure-JavaScript speed (checkpoint-codec) was higher: these machines are
// virtual, and the price of a system call, a thread wake-up or a page fault varies between
// them far more than arithmetic does. A run costs ~130 system calls, ~40 context switches and
// ~50 page faults across the service, PostgreSQL and Redis (perf, session 11).
//
// - syscall_ns: one getppid(2) (process.ppid reads it afresh on every access), JS call
//   included: the floor under every read, write, epoll and futex call.
// - thread_wake_roundtrip_us: a worker thread and the main thread hand a token back and forth
//   through Atomics.wait / Atomics.notify: two futex wake-ups and two context switches, the
//   price of every hand-off between the worker host and an attempt thread, and of every
//   PostgreSQL round trip's backend wake-up.
// - page_fault_us: the first touch of each 4 KiB page of freshly mapped memory (allocations
//   of 64 MiB are mmap'd): what a V8 heap growth, a PostgreSQL backend's new memory and a
//   fresh socket buffer pay per page.
import { Worker } from 'node:worker_threads';
import type { BenchContext, Figures, Scenario } from '../scenario.js';

const SYSCALLS = 200_000;
const WAKE_ROUNDS = 20_000;
const FAULT_BYTES = 64 * 1024 * 1024;
const FAULT_REPEATS = 4;
const PAGE = 4096;
const WAKE_TIMEOUT_MS = 5_000;

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The best of three passes (the floor, as the other ceilings report what the machine can do). */
function best(measure: () => number): number {
  return Math.min(measure(), measure(), measure());
}

function syscallNs(): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < SYSCALLS; i++) sink += process.ppid;
  const elapsed = Number(process.hrtime.bigint() - t0);
  if (sink === -1) throw new Error('unreachable');
  return elapsed / SYSCALLS;
}

// The worker waits on slot 0 for an odd value, answers with the next even one; the main thread
// does the converse. A value, not a flag, so a wake-up that comes early is seen as one.
const PING_PONG_SOURCE = `
const { workerData } = require('node:worker_threads');
const cell = new Int32Array(workerData.buffer);
for (let i = 0; i < workerData.rounds; i++) {
  const want = 2 * i + 1;
  while (Atomics.load(cell, 0) !== want) Atomics.wait(cell, 0, want - 1);
  Atomics.store(cell, 0, want + 1);
  Atomics.notify(cell, 0);
}
`;

async function threadWakeRoundtripUs(ctx: BenchContext): Promise<number> {
  const buffer = new SharedArrayBuffer(4);
  const cell = new Int32Array(buffer);
  const rounds = WAKE_ROUNDS;
  const worker = new Worker(PING_PONG_SOURCE, { eval: true, workerData: { buffer, rounds } });
  ctx.onCleanup(() => void worker.terminate());
  const exited = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  });
  await new Promise<void>((resolve) => worker.once('online', () => resolve()));
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) {
    const sent = 2 * i + 1;
    Atomics.store(cell, 0, sent);
    Atomics.notify(cell, 0);
    // The main thread blocks here (no timer or abort can run): a worker that died would hang
    // the bench, so a wait that times out ends the ceiling with an error instead.
    while (Atomics.load(cell, 0) !== sent + 1) {
      if (Atomics.wait(cell, 0, sent, WAKE_TIMEOUT_MS) === 'timed-out') throw new Error(`the ping-pong thread did not answer within ${WAKE_TIMEOUT_MS} ms`);
    }
  }
  const elapsed = Number(process.hrtime.bigint() - t0);
  await exited;
  return elapsed / rounds / 1000;
}

function pageFaultUs(): number {
  let totalNs = 0;
  let pages = 0;
  for (let r = 0; r < FAULT_REPEATS; r++) {
    const bytes = new Uint8Array(new ArrayBuffer(FAULT_BYTES));
    const t0 = process.hrtime.bigint();
    for (let at = 0; at < FAULT_BYTES; at += PAGE) bytes[at] = 1;
    totalNs += Number(process.hrtime.bigint() - t0);
    pages += FAULT_BYTES / PAGE;
  }
  return totalNs / pages / 1000;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const syscall = best(syscallNs);
  const wakes = [await threadWakeRoundtripUs(ctx), await threadWakeRoundtripUs(ctx), await threadWakeRoundtripUs(ctx)];
  const fault = best(pageFaultUs);
  return {
    syscall_ns: round(syscall, 0),
    thread_wake_roundtrip_us: round(Math.min(...wakes), 2),
    page_fault_us: round(fault, 3),
  };
}

export const machineCosts: Scenario = {
  name: 'machine',
  kind: 'ceiling',
  budgetSeconds: () => 60,
  run,
};
