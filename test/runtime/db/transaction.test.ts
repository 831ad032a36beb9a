// withTransaction on a pipelining pool (runtime/db/transaction.ts): statements issued together
// travel as one round trip with the same order and atomicity as issued one by one; a statement
// that fails aborts the transaction whatever was issued behind it; a statement deferred to the
// COMMIT that fails rolls the transaction back and is what the caller sees; an unawaited
// statement that failed can never let the transaction look committed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createPool, deferToCommit, inFlight, pgCode, withTransaction, type Pool } from '../../../runtime/index.js';
import { startCountedDatabase, type CountedDatabase } from '../../support/counted-database.js';

const test = suite('runtime/db/transaction');
let counted: CountedDatabase;
let pool: Pool;

test.before(async () => {
  counted = await startCountedDatabase('tx');
  pool = createPool({ url: counted.proxiedUrl, size: 2, statementTimeoutMs: 10_000, applicationName: 'tx-test', logger: createLogger({ level: 'silent' }) });
  await pool.query('create table items (id int primary key, label text not null)');
});
test.after(async () => {
  await pool?.end();
  await counted?.stop();
});

/** The error `fn` rejects with (undefined when it resolves). */
async function thrownBy(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const count = async (): Promise<number> => (await pool.query<{ n: number }>('select count(*)::int as n from items')).rows[0]!.n;

/** The one recorded transaction whose statements include `marker`. */
function transactionWith(marker: string) {
  const found = counted.counter.takeTransactions().filter((t) => t.statements.some((s) => s.includes(marker)));
  assert.is(found.length, 1, `one transaction with ${marker}`);
  return found[0]!;
}

test('statements issued together cost one round trip, BEGIN included; the COMMIT travels with deferred statements', async () => {
  await pool.query('delete from items');
  counted.counter.takeTransactions();
  const labels = await withTransaction(pool, async (tx) => {
    const inserted = await Promise.all([1, 2, 3].map((id) => tx.query('insert into items (id, label) values ($1, $2) returning label', [id, `pipelined-${id}`])));
    deferToCommit(tx, () => tx.query('insert into items (id, label) values ($1, $2)', [4, 'pipelined-deferred']));
    return inserted.map((r) => r.rows[0].label as string);
  });
  assert.equal(labels, ['pipelined-1', 'pipelined-2', 'pipelined-3']);
  assert.is(await count(), 4);
  const tx = transactionWith('insert into items');
  // BEGIN + three inserts, then the deferred insert + COMMIT: one round trip each.
  assert.is(tx.round_trips, 2, JSON.stringify(tx));
  assert.is(tx.statements.length, 6);
});

/** Counts the socket writes of a pooled client's connection from now on (one per write/writev system call Node makes). */
function countWrites(tx: import('pg').PoolClient): () => number {
  const stream = (tx as unknown as { connection: { stream: { _write: (...a: unknown[]) => unknown; _writev?: (...a: unknown[]) => unknown } } }).connection.stream;
  let writes = 0;
  const write = stream._write;
  const writev = stream._writev;
  stream._write = function (this: unknown, ...a: unknown[]) {
    writes++;
    return write.apply(this, a);
  };
  if (writev) {
    stream._writev = function (this: unknown, ...a: unknown[]) {
      writes++;
      return writev.apply(this, a);
    };
  }
  return () => {
    stream._write = write;
    if (writev) stream._writev = writev;
    return writes;
  };
}

test('deferred statements leave in the COMMIT\'s socket write, not one of their own', async () => {
  await pool.query('delete from items');
  let stop: (() => number) | null = null;
  await withTransaction(pool, async (tx) => {
    await tx.query(`insert into items (id, label) values (1, 'effect')`);
    stop = countWrites(tx);
    deferToCommit(tx, () => tx.query(`insert into items (id, label) values (2, 'deferred a')`));
    deferToCommit(tx, () => tx.query(`insert into items (id, label) values (3, 'deferred b')`));
    // An await between the deferral and the COMMIT (a microtask hop, as in the inbox POST).
    await Promise.resolve();
  });
  assert.is(stop!(), 1, 'two deferred inserts and the COMMIT in one write');
  assert.equal((await pool.query('select id from items order by id')).rows, [{ id: 1 }, { id: 2 }, { id: 3 }]);
});

test('a deferred statement runs before the next statement the transaction issues (the order of issuing it then)', async () => {
  await pool.query('delete from items');
  const seen = await withTransaction(pool, async (tx) => {
    deferToCommit(tx, () => tx.query(`insert into items (id, label) values (7, 'deferred')`));
    // Not awaited by anyone: still visible to the statement issued after it.
    return (await tx.query<{ n: number }>('select count(*)::int as n from items where id = 7')).rows[0]!.n;
  });
  assert.is(seen, 1);
});

test('a transaction that fails before its COMMIT never issues its deferred statements', async () => {
  await pool.query('delete from items');
  let issued = 0;
  const thrown = await thrownBy(() =>
    withTransaction(pool, async (tx) => {
      await tx.query(`insert into items (id, label) values (1, 'effect')`);
      deferToCommit(tx, () => (issued++, tx.query(`insert into items (id, label) values (2, 'deferred')`)));
      throw new Error('the effect failed');
    }),
  );
  assert.match((thrown as Error).message, /the effect failed/);
  assert.is(issued, 0, 'the rollback did not carry it');
  assert.is(await count(), 0);
  // The connection's next transaction starts clean (nothing held over from the failed one).
  await withTransaction(pool, async (tx) => void (await tx.query(`insert into items (id, label) values (3, 'next')`)));
  assert.equal((await pool.query('select id from items order by id')).rows, [{ id: 3 }]);
  assert.is(issued, 0);
});

test('the same statements awaited one by one cost a round trip each (what the pipeline saves)', async () => {
  await pool.query('delete from items');
  counted.counter.takeTransactions();
  await withTransaction(pool, async (tx) => {
    for (const id of [1, 2, 3]) await tx.query('/* sequential */ insert into items (id, label) values ($1, $2)', [id, `sequential-${id}`]);
  });
  // BEGIN travels with the first insert; then one round trip per insert and one for the COMMIT.
  assert.is(transactionWith('/* sequential */').round_trips, 4);
});

/** The table holding only item 1, which a later insert of id 1 collides with. */
async function oneExistingItem(): Promise<void> {
  await pool.query('delete from items');
  await pool.query(`insert into items (id, label) values (1, 'existing')`);
}

test('a failed statement aborts the transaction: statements issued behind it fail too and nothing commits', async () => {
  await oneExistingItem();
  const thrown = await thrownBy(() =>
    withTransaction(pool, async (tx) => {
      const first = inFlight(tx.query(`insert into items (id, label) values (2, 'before')`));
      const failing = inFlight(tx.query(`insert into items (id, label) values (1, 'duplicate')`));
      const behind = inFlight(tx.query(`insert into items (id, label) values (3, 'behind')`));
      await Promise.all([first, failing, behind]);
    }),
  );
  assert.is(pgCode(thrown), '23505', 'the first failure is what the caller sees, not the aborted statements behind it');
  assert.equal((await pool.query('select id from items order by id')).rows, [{ id: 1 }]);
});

test('a deferred statement that fails rolls the transaction back, and its error is thrown', async () => {
  await oneExistingItem();
  const thrown = await thrownBy(() =>
    withTransaction(pool, async (tx) => {
      await tx.query(`insert into items (id, label) values (2, 'effect')`);
      deferToCommit(tx, () => tx.query(`insert into items (id, label) values (1, 'deferred duplicate')`));
    }),
  );
  assert.is(pgCode(thrown), '23505');
  assert.is(await count(), 1, 'the effect did not commit');
});

test('a failed statement nobody awaited still fails the transaction (COMMIT answering ROLLBACK is an error)', async () => {
  await oneExistingItem();
  const thrown = await thrownBy(() =>
    withTransaction(pool, async (tx) => {
      await tx.query(`insert into items (id, label) values (2, 'effect')`);
      inFlight(tx.query(`insert into items (id, label) values (1, 'forgotten duplicate')`));
      return 'done';
    }),
  );
  assert.ok(thrown instanceof Error, 'withTransaction must not resolve');
  assert.match((thrown as Error).message, /rolled back at commit/);
  assert.is(await count(), 1);
});

test('deferToCommit outside withTransaction is refused', async () => {
  const client = await pool.connect();
  try {
    assert.throws(() => deferToCommit(client, () => Promise.resolve()), /outside withTransaction/);
  } finally {
    client.release();
  }
});

test('the client goes back to the pool usable after each kind of failure', async () => {
  for (let i = 0; i < 4; i++) {
    const rows = await withTransaction(pool, async (tx) => (await tx.query('select $1::int as n', [i])).rows);
    assert.equal(rows, [{ n: i }]);
  }
});

// Prepared statements (createPool): a parameterized statement is parsed once per connection and,
// repeated, planned no more (a generic plan); a schema change under a prepared statement drops
// the connection and the transaction runs again on another.
test('a parameterized statement is prepared once per connection and stops being planned', async () => {
  const client = await pool.connect();
  try {
    for (let i = 0; i < 12; i++) await client.query('select label from items where id = $1 and $2::int > -1', [i, i]);
    const { rows } = await client.query<{ statement: string; generic_plans: number; custom_plans: number }>(
      `select statement, generic_plans::int, custom_plans::int from pg_prepared_statements where statement like 'select label from items where id = $1 and %'`,
    );
    assert.is(rows.length, 1, 'one prepared statement for the twelve executions');
    assert.ok(rows[0]!.generic_plans >= 6, `planned once, then reused: ${JSON.stringify(rows[0])}`);
  } finally {
    client.release();
  }
  const unprepared = createPool({ url: counted.proxiedUrl, size: 1, statementTimeoutMs: 10_000, applicationName: 'tx-test', logger: createLogger({ level: 'silent' }), preparedStatements: false });
  try {
    const one = await unprepared.connect();
    try {
      await one.query('select label from items where id = $1', [1]);
      assert.is((await one.query('select count(*)::int as n from pg_prepared_statements')).rows[0].n, 0, 'database.prepared_statements = false prepares nothing');
    } finally {
      one.release();
    }
  } finally {
    await unprepared.end();
  }
});

test('a schema change under a prepared statement: the transaction runs again on a fresh connection', async () => {
  const single = createPool({ url: counted.proxiedUrl, size: 1, statementTimeoutMs: 10_000, applicationName: 'tx-test', logger: createLogger({ level: 'silent' }) });
  try {
    await single.query('create table shapes (id int primary key, name text)');
    await single.query('insert into shapes values (1, $1)', ['one']);
    const read = (tx: { query: Pool['query'] }) => tx.query('select * from shapes where id = $1', [1]);
    await withTransaction(single, read);
    await pool.query('alter table shapes add column colour text');
    const result = await withTransaction(single, read);
    assert.equal(result.rows, [{ id: 1, name: 'one', colour: null }]);
  } finally {
    await single.end();
  }
});

test('statements issued in one synchronous section leave in one socket write (createPool corks the section)', async () => {
  const client = await pool.connect();
  try {
    // The connection's socket, its writes counted on the way (the real socket writes them).
    const stream = (client as unknown as { connection: { stream: { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown } } }).connection.stream;
    let writes = 0;
    const write = stream._write.bind(stream);
    const writev = stream._writev.bind(stream);
    stream._write = (...a: unknown[]) => (writes++, write(...a));
    stream._writev = (...a: unknown[]) => (writes++, writev(...a));
    try {
      const together = await Promise.all([client.query('begin'), client.query('select $1::int as n', [1]), client.query('select $1::text as t', ['x']), client.query('commit')]);
      assert.is(together[1].rows[0].n, 1);
      assert.is(writes, 1, 'four statements of one section, one write');
      writes = 0;
      // Sections apart stay apart: a statement issued after an await is written on its own.
      await client.query('select 1');
      await client.query('select 2');
      assert.is(writes, 2);
    } finally {
      stream._write = write;
      stream._writev = writev;
    }
  } finally {
    client.release();
  }
});

test.run();

