// `node dist/bench/attempt-cpu.js [--attempts N] [--concurrency C] [--threads T] [--lanes L] [--rate R] [--tokens K] [--atomics sync|async|disabled]`:
// CPU per attempt of the attempt task alone (no database, no Redis): a Piscina pool shaped as
// the worker host's (T threads × C tasks each) runs N no-tool attempts, L at a time (default C),
// against the instant model server in a child process. `--rate R` starts at most R attempts per
// second (as a service under moderate load does: threads idle between attempts and pay their
// wake-ups); without it the lanes run flat out, which batches work and hides those costs. The host end of each port does only what every host must (answer
// model.resolve, close on `done`), so the figures are the attempt threads' cost plus the
// MessagePort's on both ends. Prints one JSON line: CPU ms per attempt of the whole process,
// its main thread and the rest (attempt threads, V8/libuv helpers), from /proc, and the
// messages per attempt; `_threads` is split into `_pool` (the pool's threads) and `_helpers`
// (threads the process had before the pool: V8's platform threads — GC, compilation — and
// libuv's). Reads local files only; traffic stays on 127.0.0.1.
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { ATTEMPT_TASK_FILE, attemptPoolOptions, attemptThreadExecArgv, forEachAttemptMessage, type AttemptMessage, type AttemptPost, type AttemptStart } from '../actors/attempt/index.js';
import { processCpuMs, processThreads, threadCpuMs } from './proc-cpu.js';

const MODEL_SERVER_JS = fileURLToPath(new URL('./model-server.js', import.meta.url));

interface Args {
  attempts: number;
  concurrency: number;
  threads: number;
  lanes: number;
  rate: number;
  tokens: number;
  warmup: number;
  atomics: 'sync' | 'async' | 'disabled' | undefined;
}

function startArgs(): Args {
  const { values } = parseArgs({
    options: {
      attempts: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '32' },
      threads: { type: 'string', default: '1' },
      lanes: { type: 'string' },
      rate: { type: 'string', default: '0' },
      tokens: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '300' },
      // Piscina's `atomics` (how an idle thread waits for its next task); default: the pool's.
      atomics: { type: 'string' },
    },
  });
  const atomics = values.atomics === 'sync' || values.atomics === 'async' || values.atomics === 'disabled' ? values.atomics : undefined;
  const concurrency = Number(values.concurrency);
  return { attempts: Number(values.attempts), concurrency, threads: Number(values.threads), lanes: Number(values.lanes ?? concurrency), rate: Number(values.rate), tokens: Number(values.tokens), warmup: Number(values.warmup), atomics };
}

async function modelServer(tokens: number): Promise<{ url: string; stop: () => void }> {
  const script = `import { startModelServer } from ${JSON.stringify(MODEL_SERVER_JS)}; const s = await startModelServer({ tokens_per_response: ${tokens}, token_delay_ms: 0 }); console.log(s.url);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { url: line.toString('utf8').trim(), stop: () => child.kill() };
}

function start(url: string, n: number): AttemptStart {
  return {
    type: 'start',
    run: { id: `run_${n}`, workspace_id: 'ws_1', thread_id: `thr_${n}`, attempt_id: `att_${n}`, attempt_number: 1, input: { content: [{ type: 'text', text: `message ${n}` }] }, options: {} },
    config: { instructions: 'Be brief.' },
    model: { api: 'openai-chat', base_url: url, model: 'mock-model', settings: {} },
    history: [],
    checkpoint: null,
    checkpoint_seq: 0,
    next_ordinal: 1,
    resume: null,
    limits: { max_requests: null, model_timeout_ms: 10_000 },
    context: { context_window_tokens: 32_768, compact_threshold: 0.8, proactive_context_management_threshold: 0.6 },
  };
}

/** One attempt through the pool; resolves with the number of messages and of port posts (a batch is one) once `done` arrives. */
function attempt(pool: Piscina, s: AttemptStart): Promise<{ count: number; posts: number }> {
  const { port1, port2 } = new MessageChannel();
  let count = 0;
  let posts = 0;
  return new Promise<{ count: number; posts: number }>((resolve, reject) => {
    port1.on('message', (post: AttemptPost) => {
      posts++;
      forEachAttemptMessage(post, onMessage);
    });
    const onMessage = (m: AttemptMessage): void => {
      count++;
      if (m.type === 'host.request') port1.postMessage({ type: 'host.response', id: m.id, ok: true, result: s.model });
      if (m.type === 'done') {
        port1.close();
        if (m.outcome === 'completed') resolve({ count, posts });
        else reject(new Error(`attempt ${m.outcome}: ${JSON.stringify(m.failure)}`));
      }
    };
    pool.run({ start: s, port: port2 }, { transferList: [port2] }).catch(reject);
  });
}

async function runMany(pool: Piscina, url: string, total: number, lanes: number, rate: number, offset: number): Promise<{ messages: number; posts: number }> {
  let next = 0;
  let messages = 0;
  let posts = 0;
  const t0 = performance.now();
  const lane = async (): Promise<void> => {
    while (next < total) {
      const n = next++;
      // Paced: attempt n starts no earlier than n / rate seconds in.
      const wait = rate > 0 ? t0 + (n * 1000) / rate - performance.now() : 0;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const one = await attempt(pool, start(url, offset + n));
      messages += one.count;
      posts += one.posts;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { messages, posts };
}

/** CPU (ms) of the threads the process did not have before the pool (`before`): the pool's. */
function poolThreadsCpuMs(before: Set<number>): number {
  return processThreads(process.pid)
    .filter((t) => !before.has(t.tid))
    .reduce((sum, t) => sum + t.cpuMs, 0);
}

async function main(): Promise<void> {
  const args = startArgs();
  const server = await modelServer(args.tokens);
  await stat('.'); // starts libuv's thread pool now, so that its threads count as helpers
  const before = new Set(processThreads(process.pid).map((t) => t.tid));
  const pool = new Piscina({ filename: ATTEMPT_TASK_FILE, maxThreads: args.threads, concurrentTasksPerWorker: args.concurrency, ...attemptPoolOptions(args.threads), ...(args.atomics ? { atomics: args.atomics } : {}), execArgv: attemptThreadExecArgv() });
  try {
    await runMany(pool, server.url, args.warmup, args.lanes, 0, 0);
    const [cpu0, main0, pool0, t0] = [processCpuMs(process.pid), threadCpuMs(process.pid, process.pid), poolThreadsCpuMs(before), performance.now()];
    const { messages, posts } = await runMany(pool, server.url, args.attempts, args.lanes, args.rate, args.warmup);
    const [cpu1, main1, pool1, t1] = [processCpuMs(process.pid), threadCpuMs(process.pid, process.pid), poolThreadsCpuMs(before), performance.now()];
    const per = (ms: number): number => Math.round((ms / args.attempts) * 1000) / 1000;
    console.log(
      JSON.stringify({
        ...args,
        cpu_ms_per_attempt: per(cpu1 - cpu0),
        cpu_ms_per_attempt_main: per(main1 - main0),
        cpu_ms_per_attempt_threads: per(cpu1 - cpu0 - (main1 - main0)),
        cpu_ms_per_attempt_pool: per(pool1 - pool0),
        cpu_ms_per_attempt_helpers: per(cpu1 - cpu0 - (main1 - main0) - (pool1 - pool0)),
        messages_per_attempt: Math.round((messages / args.attempts) * 10) / 10,
        posts_per_attempt: Math.round((posts / args.attempts) * 10) / 10,
        attempts_per_sec: Math.round((args.attempts / (t1 - t0)) * 1000),
      }),
    );
  } finally {
    await pool.destroy();
    server.stop();
  }
}

await main();
