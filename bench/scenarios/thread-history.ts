// Scenario: what a long thread costs (RESULTS.md, "Levers, session 3: database", lever 5). One
// `all` process and an instant model (8 tokens). For each history size (0, 200 and 2,000
// messages by default; BENCH_HISTORY_SIZES="0,200,2000"), fresh threads whose message_history
// is set beforehand by one UPDATE (alternating user and assistant messages of ~500 characters,
// the shape the attempt appends: ~100 KB at 200 messages, ~1.1 MB at 2,000), then one run at a
// time as in run-latency: t0 just before POST /threads/{id}/inbox, the POST's 201, the first
// item.delta and run.status completed, timestamped when the thread stream delivers them.
// BENCH_HISTORY_SAMPLES (default 15) timed runs per size after 3 warm-up runs; --seconds is
// not used (a fixed count keeps the sizes comparable under a varying load). For each size but 0,
// the same count again as one conversation (`h<size>_conversation_*`): all runs on one thread
// seeded with that history, each POST after the previous run's seal.
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { queryRows } from '../service-harness.js';
import { createThreads } from '../service-seed.js';
import { oneRun, startInstantService, type Sample } from './run-latency.js';

const TOKENS = 8;
const WARMUP_RUNS = 3;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(11).slice(0, 480);

/** A conversation of `count` messages as runs leave it in message_history. */
export function seededHistory(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0 ? { role: 'user', content: [{ type: 'text', text: `${i} ${TEXT}` }] } : { role: 'assistant', content: `${i} ${TEXT}` },
  );
}

function sizesFromEnv(): number[] {
  const raw = process.env.BENCH_HISTORY_SIZES ?? '0,200,2000';
  return raw.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n >= 0);
}

/** `<prefix>_post_201_p50_ms` and so on: the p50 and p99 of each stage of the samples. */
function putStages(figures: Figures, prefix: string, samples: readonly Sample[]): void {
  const stages: Array<[string, (s: Sample) => number]> = [['post_201', (s) => s.post], ['post_to_first_delta', (s) => s.delta], ['post_to_completed', (s) => s.completed]];
  for (const [name, pick] of stages) {
    const s = summarizeLatency(samples.map(pick));
    figures[`${prefix}_${name}_p50_ms`] = s.p50_ms;
    figures[`${prefix}_${name}_p99_ms`] = s.p99_ms;
  }
}

async function run(ctx: BenchContext): Promise<Figures> {
  const samplesPerSize = Number(process.env.BENCH_HISTORY_SAMPLES ?? 15);
  const { env, seed, kv } = await startInstantService(ctx);
  const figures: Figures = { model_tokens: TOKENS, samples_per_size: samplesPerSize };
  for (const size of sizesFromEnv()) {
    // Seeded outside the timed intervals: every thread of this size gets the same history.
    const threads = await createThreads(seed, WARMUP_RUNS + samplesPerSize);
    await queryRows(env.databaseUrl, `update threads set message_history = $2::jsonb where id = any($1::text[])`, [threads, JSON.stringify(seededHistory(size))]);
    const [{ bytes } = { bytes: 0 }] = await queryRows<{ bytes: number }>(env.databaseUrl, `select octet_length(message_history::text) as bytes from threads where id = $1`, [threads[0]]);
    const samples: Sample[] = [];
    for (const [i, threadId] of threads.entries()) {
      if (ctx.signal.aborted) break;
      const sample = await oneRun(ctx, seed, kv, threadId);
      if (i >= WARMUP_RUNS) samples.push(sample);
    }
    figures[`h${size}_history_bytes`] = bytes;
    figures[`h${size}_runs`] = samples.length;
    putStages(figures, `h${size}`, samples);
    if (size === 0) continue;
    // The same history as one conversation: every run on one thread, each POST after the
    // previous run's seal (the history grows by two messages a run, which these sizes do not
    // feel). What a user of a long chat sees: the process has read the thread before.
    const [conversation] = await createThreads(seed, 1);
    await queryRows(env.databaseUrl, `update threads set message_history = $2::jsonb where id = $1`, [conversation, JSON.stringify(seededHistory(size))]);
    const turns: Sample[] = [];
    for (let i = 0; i < WARMUP_RUNS + samplesPerSize && !ctx.signal.aborted; i++) {
      const sample = await oneRun(ctx, seed, kv, conversation ?? '');
      if (i >= WARMUP_RUNS) turns.push(sample);
    }
    putStages(figures, `h${size}_conversation`, turns);
  }
  return figures;
}

export const threadHistory: Scenario = {
  name: 'thread-history',
  kind: 'scenario',
  budgetSeconds: () => 600,
  run,
};
