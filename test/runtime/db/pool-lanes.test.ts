// The pool's lanes (runtime/db/pool.ts, PoolLane): when every connection is checked out, a
// request made through the pool waits ahead of one made through backgroundLane(pool), FIFO
// within a lane; a background request that waited past its aging bound is served first; the
// connection timeout still applies to every waiter; the background lane shares the pool's
// connections and its committed-change listener; with backgroundConnections, background work
// holds at most that many connections at once while foreground requests take the others.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { backgroundConnections, backgroundLane, createLogger, createPool, noteChange, onCommittedChanges, withTransaction, type CommittedChange, type Pool, type PoolClient } from '../../../runtime/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

const test = suite('runtime/db/pool-lanes');
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase('lanes');
});
test.after(async () => {
  await db?.drop();
});

const logger = createLogger({ level: 'silent' });

/** Runs `fn` with a pool of one connection, ended afterwards. */
async function withOnePool(fn: (pool: Pool) => Promise<void>, options: { agingMs?: number; connectTimeoutMs?: number } = {}): Promise<void> {
  const pool = createPool({ url: db.url, size: 1, statementTimeoutMs: 10_000, applicationName: 'lanes-test', logger, backgroundAgingMs: options.agingMs ?? 60_000, connectTimeoutMs: options.connectTimeoutMs ?? 10_000 });
  try {
    await fn(pool);
  } finally {
    await pool.end();
  }
}

/** Waits for `n` checkouts of `pool`'s single connection and records who got it, in order. */
async function serveInOrder(pool: Pool, requests: Array<{ name: string; lane: 'fg' | 'bg' }>): Promise<string[]> {
  const order: string[] = [];
  const holder = await pool.connect();
  const waiting = requests.map(async ({ name, lane }) => {
    const client = await (lane === 'bg' ? backgroundLane(pool) : pool).connect();
    order.push(name);
    // Held across a turn of the event loop, so the next waiter is handed the connection only
    // after this one released it (the pool has one).
    await new Promise((r) => setImmediate(r));
    client.release();
  });
  holder.release();
  await Promise.all(waiting);
  return order;
}

test('with the pool exhausted, foreground requests are served before background ones, FIFO within each lane', () =>
  withOnePool(async (pool) => {
    const order = await serveInOrder(pool, [
      { name: 'bg1', lane: 'bg' },
      { name: 'fg1', lane: 'fg' },
      { name: 'bg2', lane: 'bg' },
      { name: 'fg2', lane: 'fg' },
      { name: 'fg3', lane: 'fg' },
    ]);
    assert.equal(order, ['fg1', 'fg2', 'fg3', 'bg1', 'bg2']);
  }));

test('a background request that waited past the aging bound is served before newer foreground ones', () =>
  withOnePool(async (pool) => {
    const order: string[] = [];
    const holder = await pool.connect();
    const bg = backgroundLane(pool).connect().then((c) => (order.push('bg'), c.release()));
    await new Promise((r) => setTimeout(r, 80));
    const fg = pool.connect().then((c) => (order.push('fg'), c.release()));
    holder.release();
    await Promise.all([bg, fg]);
    assert.equal(order, ['bg', 'fg']);
  }, { agingMs: 50 }));

test("pool.query through the background lane waits in it (pg-pool's query connects through the lane)", () =>
  withOnePool(async (pool) => {
    const order: string[] = [];
    const holder = await pool.connect();
    const bg = backgroundLane(pool).query('select 1 as one').then((r) => order.push(`bg:${r.rows[0].one}`));
    const fg = pool.query('select 2 as two').then((r) => order.push(`fg:${r.rows[0].two}`));
    holder.release();
    await Promise.all([bg, fg]);
    assert.equal(order, ['fg:2', 'bg:1']);
  }));

test('the connection timeout applies to a waiter in either lane', () =>
  withOnePool(async (pool) => {
    const holder = await pool.connect();
    const errors = await Promise.all([backgroundLane(pool).connect(), pool.connect()].map((p) => p.then(() => null, (e: Error) => e.message)));
    assert.equal(errors, ['timeout exceeded when trying to connect', 'timeout exceeded when trying to connect']);
    holder.release();
    const client = await backgroundLane(pool).connect();
    client.release();
  }, { connectTimeoutMs: 200 }));

test("a transaction in the background lane commits on the pool's connections and announces its changes to the pool's listener", () =>
  withOnePool(async (pool) => {
    const heard: CommittedChange[] = [];
    onCommittedChanges(pool, (changes) => heard.push(...changes));
    const value = await withTransaction(backgroundLane(pool), async (tx) => {
      noteChange(tx, { kind: 'agent', id: 'agt_lanes' });
      return (await tx.query('select 41 + 1 as n')).rows[0].n as number;
    });
    assert.is(value, 42);
    assert.equal(heard, [{ kind: 'agent', id: 'agt_lanes' }]);
    assert.is(pool.totalCount, 1, 'one connection, shared by both lanes');
  }));

test('background work holds at most backgroundConnections at once; foreground requests take the rest at once', async () => {
  const pool = createPool({ url: db.url, size: 4, statementTimeoutMs: 10_000, applicationName: 'lanes-test', logger, backgroundConnections: 2, connectTimeoutMs: 10_000 });
  try {
    const background = backgroundLane(pool);
    const first = await background.connect();
    const second = await background.connect();
    let third: PoolClient | null = null;
    const thirdAsked = background.connect().then((c) => (third = c));
    // The third background request waits although two connections are free...
    await new Promise((r) => setTimeout(r, 100));
    assert.is(third, null, 'a third background connection while two are held');
    // ...which foreground requests get at once.
    const [fg1, fg2] = await Promise.all([pool.connect(), pool.connect()]);
    assert.is(third, null);
    // pool.query through the lane (pg-pool's callback form) waits behind it, FIFO.
    const order: string[] = [];
    const queried = background.query('select 7 as n').then((r) => order.push(`query:${r.rows[0].n}`));
    void thirdAsked.then(() => order.push('third'));
    first.release();
    await thirdAsked;
    assert.equal(order, ['third']);
    second.release();
    await queried;
    assert.equal(order, ['third', 'query:7']);
    (third as PoolClient | null)?.release();
    fg1.release();
    fg2.release();
    // A transaction through the lane (the seal's path) still gets a connection.
    assert.is(await withTransaction(background, async (tx) => (await tx.query('select 1 as one')).rows[0].one as number), 1);
  } finally {
    await pool.end();
  }
});

test('the connection timeout applies to a background request waiting for its bound', async () => {
  const pool = createPool({ url: db.url, size: 4, statementTimeoutMs: 10_000, applicationName: 'lanes-test', logger, backgroundConnections: 1, connectTimeoutMs: 150 });
  try {
    const held = await backgroundLane(pool).connect();
    const error = await backgroundLane(pool).connect().then(() => null, (e: Error) => e.message);
    assert.is(error, 'timeout exceeded when trying to connect');
    held.release();
    // The timed-out waiter took no slot: the next request is served.
    (await backgroundLane(pool).connect()).release();
  } finally {
    await pool.end();
  }
});

test('database.background_connections: 0 bounds processes that accept inputs (1), not workers; a set value applies to every role, within the pool', () => {
  assert.is(backgroundConnections({ pool_size: 10, background_connections: 0 }, 'all'), 1);
  assert.is(backgroundConnections({ pool_size: 10, background_connections: 0 }, 'control'), 1);
  assert.is(backgroundConnections({ pool_size: 50, background_connections: 0 }, 'all'), 1);
  assert.is(backgroundConnections({ pool_size: 1, background_connections: 0 }, 'all'), 1);
  assert.is(backgroundConnections({ pool_size: 10, background_connections: 0 }, 'worker'), undefined);
  assert.is(backgroundConnections({ pool_size: 10, background_connections: 3 }, 'worker'), 3);
  assert.is(backgroundConnections({ pool_size: 10, background_connections: 30 }, 'all'), 10);
});

test('unbounded background work (pg-boss) waits behind foreground requests but takes no bounded slot', async () => {
  const pool = createPool({ url: db.url, size: 2, statementTimeoutMs: 10_000, applicationName: 'lanes-test', logger, backgroundConnections: 1, connectTimeoutMs: 10_000, backgroundAgingMs: 60_000 });
  try {
    const held = await backgroundLane(pool).connect();
    // The bound is taken, yet maintenance gets the other connection at once...
    const maintenance = await backgroundLane(pool, { bounded: false }).connect();
    // ...and with both held, it queues behind a foreground request.
    const order: string[] = [];
    const waiting = [
      backgroundLane(pool, { bounded: false }).connect().then((c) => (order.push('maintenance'), c.release())),
      pool.connect().then((c) => (order.push('foreground'), c.release())),
    ];
    maintenance.release();
    await Promise.all(waiting);
    assert.equal(order, ['foreground', 'maintenance']);
    held.release();
  } finally {
    await pool.end();
  }
});

test.run();
