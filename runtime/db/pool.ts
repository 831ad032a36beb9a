import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../log/index.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

// timestamptz and bigint come back as strings: timestamps are passed through as ISO text by
// the row mappers (toIso), counts are cast to int in SQL where they are small.
/**
 * Parameterized statements are prepared once per connection under a name derived from their text
 * (issue #18: PostgreSQL otherwise parses, analyzes and plans every unnamed statement at each
 * Bind — 0.1–0.35 ms apiece on the hot paths, measured). A named statement is parsed once per
 * connection; from its sixth execution PostgreSQL uses a generic plan when that costs no more
 * than the custom ones (plan_cache_mode auto), so hot statements are no longer planned at all.
 *
 * Bounded: the first PREPARED_TEXTS_MAX distinct texts are named (the service's statements
 * are a fixed set, a few hundred; text built per call, e.g. IN lists of varying length, would
 * otherwise grow every connection's statement cache), later ones run unnamed as before.
 * Prepared statements outlive a rolled-back transaction (they are not transactional), and a
 * Parse refused in an aborted transaction is retried by the statement's next use (pg forgets
 * a name whose Parse failed). A schema change that alters a cached statement's result columns
 * makes PostgreSQL answer 0A000 "cached plan must not change result type" once per
 * connection and statement: the client that sees it is dropped from the pool (ddlChanged).
 */
const PREPARED_TEXTS_MAX = 2000;
const preparedNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < PREPARED_TEXTS_MAX) {
    name = `svc_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * A pg client that names its parameterized statements (see statementName) and writes the
 * statements it is given in one synchronous section with ONE socket write: the first statement
 * corks the connection's socket and a microtask uncorks it, so BEGIN with a transaction's first
 * statements, or the statements of one pipelined round trip, leave as one writev instead of one
 * per statement (pg corks each statement's own messages, not across statements). The microtask
 * runs before any I/O, so no statement waits for anything but the code that issued it; nothing
 * about order changes (the socket keeps the write order).
 */
class PreparingClient extends pg.Client {
  private corked = false;
  /** Statements held for the next one issued on this connection (holdForNextStatement). */
  private held: Array<() => void> = [];

  /** See holdForNextStatement. */
  hold(issue: () => void): void {
    this.held.push(issue);
  }

  /** Forgets held statements without issuing them (their transaction is being rolled back). */
  dropHeld(): void {
    this.held = [];
  }

  private corkSection(): void {
    if (this.corked) return;
    const stream = (this as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void; writable?: boolean } } }).connection?.stream;
    if (!stream?.cork || !stream.uncork || !stream.writable) return;
    stream.cork();
    this.corked = true;
    queueMicrotask(() => {
      this.corked = false;
      stream.uncork!();
    });
  }

  override query(config: unknown, values?: unknown, callback?: unknown): never {
    this.corkSection();
    if (this.held.length > 0) {
      // Held statements go first, in the order they were held, in this statement's write.
      const held = this.held;
      this.held = [];
      for (const issue of held) issue();
    }
    const run = super.query as (...args: unknown[]) => never;
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = statementName(config);
      if (name) return run.call(this, { name, text: config, values }, callback);
    } else if (config !== null && typeof config === 'object' && !('submit' in config)) {
      // A config object ({ text, values }); a Query object (`submit`) or a named one passes as it is.
      const c = config as { text?: unknown; values?: unknown; name?: unknown };
      const params = c.values ?? values;
      if (typeof c.text === 'string' && c.name === undefined && Array.isArray(params)) {
        const name = statementName(c.text);
        if (name) return run.call(this, { ...c, name, values: params }, typeof values === 'function' ? values : callback);
      }
    }
    return run.call(this, config, values, callback);
  }
}

/**
 * Holds a statement whose answer nobody awaits until the next statement issued on the same
 * connection, which then carries it in the same socket write, ahead of itself (the order
 * PostgreSQL runs them in is the order they were held and issued, as if issued now). Used for
 * the statements deferred to a transaction's COMMIT (deferToCommit): they leave with whatever
 * the transaction issues next — the COMMIT itself at the latest — instead of in a write of
 * their own. Returns false where the connection cannot hold (not a pool's preparing client):
 * the caller issues the statement at once.
 */
export function holdForNextStatement(client: unknown, issue: () => void): boolean {
  if (!(client instanceof PreparingClient)) return false;
  client.hold(issue);
  return true;
}

/** Forgets the statements held on a connection (its transaction rolls back without them). */
export function dropHeldStatements(client: unknown): void {
  if (client instanceof PreparingClient) client.dropHeld();
}

/** PostgreSQL's answer when a cached statement's result columns changed under it (ALTER TABLE). */
export function isCachedPlanChanged(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/**
 * Which queue a request for a connection joins when every connection is checked out. A pool is
 * FIFO by itself; measured under 32 concurrent clients (bench/RESULTS.md, session 11), an
 * inbox POST waited ~23 ms of its ~85 ms for a connection, behind step commits and seals
 * that no user was waiting on. `foreground` (every request made through the pool itself) is
 * served before `background` (made through backgroundLane(pool): work of a run already
 * streaming — its step commits, its seal, its lease renewals — and sweeps), FIFO within a lane.
 *
 * Starvation bound: a background request that has waited BACKGROUND_AGING_MS is served next,
 * before any foreground one, so background work waits at most that long more than it would in
 * a FIFO pool (lease renewals have seconds of slack; worker.authority_seconds). The lanes order
 * waiters only: the pool's size, its connection timeout (connectionTimeoutMillis applies to
 * every waiter, as before) and the connections themselves are shared.
 *
 * Bounded background (`backgroundConnections`, config database.background_connections): at
 * most that many connections do a running attempt's background work at once (its step commits,
 * its seal, lease renewals, page packing); a request beyond it waits for one of them to be
 * released (FIFO, the connection timeout counted for this wait too) before it asks the pool.
 * Ordering waiters is not enough on a saturated machine: ten seals in flight are ten PostgreSQL
 * backends competing for the cores with the inbox statement a user waits on. Measured in role
 * all under 32 clients (bench/RESULTS.md, sessions 17 and 18): first delta p50 ~73 ms unbounded,
 * ~30 ms with two, ~18 ms with one, for ~6 % and ~6–17 % fewer runs/s; the bound is also the
 * seals' concurrency, so it caps how fast a backlog of runs drains (one seal per round trip pair
 * per connection), and in a worker process (no inbox) a bound of two cut throughput by a tenth —
 * hence one by default where inputs are accepted (services.ts backgroundConnections) and none in
 * role worker. pg-boss's polling and maintenance take the lane unbounded (backgroundLane's
 * `bounded`), so a slow maintenance statement never holds the slot a seal needs. No bounded work
 * holds a connection while it waits for another (a seal or step commit is one transaction on one
 * connection; renewals and packing's statements one at a time), so the bound cannot deadlock; a
 * wait is bounded by the work ahead of it (at most one seal or step per attempt).
 */
export type PoolLane = 'foreground' | 'background';
export const BACKGROUND_AGING_MS = 100;

const LANE = Symbol('pool-lane');
const SINCE = Symbol('pool-lane-since');
const BACKGROUND = Symbol('background-lane');
const MAINTENANCE = Symbol('background-lane-unbounded');

/** A waiter in pg-pool's queue (its PendingItem), tagged with its lane. */
interface Waiter {
  [LANE]?: PoolLane;
  [SINCE]?: number;
}

/** pg-pool's internals the lanes rely on (pg-pool 3.x; pool-lanes.test.ts fails if they change). */
interface PoolInternals {
  _pendingQueue?: Waiter[];
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * A pg.Pool whose waiters are ordered by lane (see PoolLane). pg-pool keeps one queue of
 * waiters and hands a released connection to its head; a foreground waiter is placed ahead of
 * every background one as it joins, and a background waiter past its aging bound is moved to
 * the head before each hand-out. Single-threaded: connect and the hand-out run on the event
 * loop, so the queue is never reordered while pg-pool reads it.
 */
class LanedPool extends pg.Pool {
  backgroundAgingMs = BACKGROUND_AGING_MS;
  /** Connections background work may hold at once (PoolLane); Infinity: no bound. */
  backgroundConnections = Infinity;
  /** Background connections checked out, or asked of the pool and not yet handed out. */
  private backgroundHeld = 0;
  /** Background requests waiting for one of backgroundConnections, FIFO. */
  private readonly backgroundQueue: Array<{ grant: () => void; timer: NodeJS.Timeout | null }> = [];

  /**
   * A connection for background work: asked of the pool (through its lane) once fewer than
   * backgroundConnections are held; released through the client as usual, which frees the slot.
   */
  connectBackground(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const request = (cb: ConnectCallback): void => {
      const ask = (): void => {
        this.backgroundHeld++;
        this.connectIn('background', (error, client, done) => {
          if (error || !client) {
            this.backgroundReleased();
            cb(error, client, done);
            return;
          }
          // pg-pool gives each checkout a fresh release (one call allowed): wrapped, so the
          // slot is freed exactly once, whether release or done is called.
          const release = client.release;
          let freed = false;
          const wrapped = ((err?: Error | boolean) => {
            if (!freed) {
              freed = true;
              this.backgroundReleased();
            }
            return release.call(client, err);
          }) as typeof client.release;
          client.release = wrapped;
          cb(undefined, client, wrapped as (release?: unknown) => void);
        });
      };
      if (this.backgroundHeld < this.backgroundConnections) return ask();
      const waiter: { grant: () => void; timer: NodeJS.Timeout | null } = { grant: ask, timer: null };
      const timeout = this.options.connectionTimeoutMillis;
      if (timeout) {
        waiter.timer = setTimeout(() => {
          const at = this.backgroundQueue.indexOf(waiter);
          if (at === -1) return;
          this.backgroundQueue.splice(at, 1);
          cb(new Error('timeout exceeded when trying to connect'), undefined, () => undefined);
        }, timeout);
      }
      this.backgroundQueue.push(waiter);
    };
    if (callback) return request(callback);
    return new Promise((resolve, reject) => request((error, client) => (error || !client ? reject(error) : resolve(client))));
  }

  private backgroundReleased(): void {
    this.backgroundHeld--;
    const next = this.backgroundQueue.shift();
    if (!next) return;
    if (next.timer) clearTimeout(next.timer);
    next.grant();
  }

  connectIn(lane: PoolLane, callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const queue = (this as unknown as PoolInternals)._pendingQueue;
    const before = queue?.length ?? 0;
    const connect = pg.Pool.prototype.connect as (this: pg.Pool, cb?: ConnectCallback) => Promise<pg.PoolClient> | void;
    const result = connect.call(this, callback);
    // pg-pool queued the request (synchronously, at the end) when no connection was free.
    if (Array.isArray(queue) && queue.length === before + 1) {
      const waiter = queue[queue.length - 1]!;
      waiter[LANE] = lane;
      waiter[SINCE] = performance.now();
      if (lane === 'foreground') {
        const firstBackground = queue.findIndex((w) => w[LANE] === 'background');
        if (firstBackground !== -1 && firstBackground < queue.length - 1) {
          queue.pop();
          queue.splice(firstBackground, 0, waiter);
        }
      }
    }
    return result;
  }

  override connect(callback?: ConnectCallback): never {
    return this.connectIn('foreground', callback) as never;
  }

  /** pg-pool's hand-out of a free connection to the queue's head: aged background work first. */
  _pulseQueue(): void {
    const queue = (this as unknown as PoolInternals)._pendingQueue;
    if (Array.isArray(queue) && queue.length > 1) {
      const oldest = queue.findIndex((w) => w[LANE] === 'background');
      const waiter = oldest > 0 ? queue[oldest]! : undefined;
      if (waiter && performance.now() - (waiter[SINCE] ?? 0) >= this.backgroundAgingMs) {
        queue.splice(oldest, 1);
        queue.unshift(waiter);
      }
    }
    (pg.Pool.prototype as unknown as { _pulseQueue: () => void })._pulseQueue.call(this);
  }
}

/**
 * The same pool, its requests in the background lane: pass it where a statement or transaction
 * is background work (PoolLane). It shares everything with the pool (connections, committed-
 * change listener, events) — only its connect differs, and pg-pool's query() goes through it.
 * A pool that is not laned (a test's plain pg.Pool) is returned as it is.
 * `bounded` (default true): the work counts against backgroundConnections. False for work that
 * is not a run's (pg-boss's polling and maintenance): ordered behind foreground requests like
 * all background work, but a slow maintenance statement never holds the slot a seal needs.
 */
export function backgroundLane(pool: pg.Pool, options: { bounded?: boolean } = {}): pg.Pool {
  if (!(pool instanceof LanedPool)) return pool;
  const bounded = options.bounded !== false;
  const tag = bounded ? BACKGROUND : MAINTENANCE;
  const tagged = pool as unknown as { [BACKGROUND]?: pg.Pool; [MAINTENANCE]?: pg.Pool };
  tagged[tag] ??= Object.create(pool, {
    connect: { value: (callback?: ConnectCallback) => (bounded ? pool.connectBackground(callback) : pool.connectIn('background', callback)) },
  }) as pg.Pool;
  return tagged[tag]!;
}

export function createPool(options: {
  url: string;
  size: number;
  statementTimeoutMs: number;
  applicationName: string;
  logger: Logger;
  connectTimeoutMs?: number;
  /** Name parameterized statements (prepared once per connection); default true. */
  preparedStatements?: boolean;
  /** Tests: how long a background waiter may wait before it is served first (PoolLane). */
  backgroundAgingMs?: number;
  /** Connections background work may hold at once (PoolLane); default: no bound. */
  backgroundConnections?: number;
}): pg.Pool {
  const pool = new LanedPool({
    ...(options.preparedStatements === false ? {} : { Client: PreparingClient }),
    // pg's pipeline mode: a statement is written when it is issued, not when the previous one
    // has answered, so statements issued together cost one round trip (runtime/db/transaction.ts
    // says how the hot transactions use it). A client awaited statement by statement behaves
    // exactly as without it. Not in the types of @types/pg yet.
    ...({ pipeline: true } as object),
    connectionString: options.url,
    max: options.size,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  if (options.backgroundAgingMs !== undefined) pool.backgroundAgingMs = options.backgroundAgingMs;
  if (options.backgroundConnections !== undefined && options.backgroundConnections > 0) pool.backgroundConnections = options.backgroundConnections;
  // An idle client losing its connection must not crash the process; the next query reconnects.
  // Once end() was called the loss is expected, not news: end() resolves when it has asked
  // each idle connection to close, not when the sockets are closed, so stopping the embedded
  // server right after it can still cut them.
  const lost = (error: Error, message: string) => {
    if (pool.ending) options.logger.debug({ err: error.message }, 'database connection closed at shutdown');
    else options.logger.warn({ err: error.message }, message);
  };
  pool.on('error', (error) => lost(error, 'database connection lost'));
  // pg-pool listens for errors only while a client is idle: a checked-out client whose server
  // session ends between two statements (a restart sends 57P01 to every session) would emit an
  // unhandled 'error' and end the process. Every client keeps a listener for its whole life;
  // the failed client is then unusable, its next statement rejects (and the caller's error
  // handling runs), and releasing it drops it from the pool (pg-pool checks _queryable).
  pool.on('connect', (client) => {
    client.on('error', (error) => lost(error, 'database connection lost while in use'));
  });
  return pool;
}

export function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}
