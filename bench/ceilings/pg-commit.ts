// Ceiling: single-row INSERT + COMMIT per second from Node, with as many concurrent clients
// as the service's pool has connections. Every durable write the service makes is at least
// one such commit, so run and API write rates are read against this figure.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';

const WARMUP_SECONDS = 0.5;

function createScratchTable(): string {
  return `create table scratch_items (
    id bigserial primary key,
    thread_id text not null,
    payload jsonb not null,
    created_at timestamptz not null default now()
  )`;
}

function insertItem(threadId: string, seq: number): { text: string; values: unknown[] } {
  return {
    text: 'insert into scratch_items (thread_id, payload) values ($1, $2)',
    values: [threadId, JSON.stringify({ type: 'message', seq, text: 'hello from the bench' })],
  };
}

/** A fresh database per run, dropped in cleanup, so the figure never depends on leftovers. */
async function createScratchDatabase(ctx: BenchContext): Promise<string> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ctx.urls.database });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  // Registered before the pool's end(), so it runs after it (cleanups run in reverse).
  ctx.onCleanup(async () => {
    const dropper = new pg.Client({ connectionString: ctx.urls.database });
    await dropper.connect();
    try {
      await dropper.query(`drop database if exists ${name} with (force)`);
    } finally {
      await dropper.end();
    }
  });
  const url = new URL(ctx.urls.database);
  url.pathname = `/${name}`;
  return url.toString();
}

type Commit = (client: pg.PoolClient, seq: number) => Promise<void>;

interface LoopResult {
  readonly samples: number[];
  readonly perSec: number;
}

/** Each of poolSize lanes commits in a loop until the deadline; rate over the real elapsed time. */
async function commitLoop(pool: pg.Pool, ctx: BenchContext, seconds: number, commit: Commit): Promise<LoopResult> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const samples: number[] = [];
  const lane = async (laneIndex: number): Promise<void> => {
    const client = await pool.connect();
    try {
      for (let seq = 0; performance.now() < deadline && !ctx.signal.aborted; seq++) {
        const t0 = performance.now();
        await commit(client, laneIndex * 1e9 + seq);
        samples.push(performance.now() - t0);
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: ctx.poolSize }, (_, i) => lane(i)));
  return { samples, perSec: Math.round((samples.length * 1000) / (performance.now() - started)) };
}

// The service's transaction helper shape: BEGIN, the write, COMMIT on one checked-out client.
const explicitTransaction: Commit = async (client, seq) => {
  await client.query('begin');
  await client.query(insertItem(`thr_${seq % 97}`, seq));
  await client.query('commit');
};

// One statement, implicitly committed: the floor of what a single durable write costs.
const autocommit: Commit = async (client, seq) => {
  await client.query(insertItem(`thr_${seq % 97}`, seq));
};

async function run(ctx: BenchContext): Promise<Figures> {
  const url = await createScratchDatabase(ctx);
  const pool = new pg.Pool({ connectionString: url, max: ctx.poolSize });
  // An idle client's error (e.g. server restart) must not crash the harness; the loops see it.
  pool.on('error', (err) => ctx.log(`pg pool: ${err.message}`));
  ctx.onCleanup(() => pool.end());
  await pool.query(createScratchTable());

  await commitLoop(pool, ctx, Math.min(WARMUP_SECONDS, ctx.seconds), explicitTransaction);
  const tx = await commitLoop(pool, ctx, ctx.seconds, explicitTransaction);
  const auto = await commitLoop(pool, ctx, ctx.seconds, autocommit);
  const txLatency = summarizeLatency(tx.samples);
  const autoLatency = summarizeLatency(auto.samples);
  return {
    pool_size: ctx.poolSize,
    commits_per_sec: tx.perSec,
    p50_ms: txLatency.p50_ms,
    p99_ms: txLatency.p99_ms,
    autocommit_inserts_per_sec: auto.perSec,
    autocommit_p50_ms: autoLatency.p50_ms,
    autocommit_p99_ms: autoLatency.p99_ms,
  };
}

export const pgCommit: Scenario = { name: 'pg-commit', kind: 'ceiling', run };
