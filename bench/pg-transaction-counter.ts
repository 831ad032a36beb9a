// A counting TCP proxy between the service and PostgreSQL: the statement log of the db-commits
// scenario. It reads the wire protocol in both directions (never changes a byte) and counts
// transactions exactly, as they end, with no flush lag (pg_stat_database's xact_commit is
// flushed by backends at most once a second, and an idle one may hold it for 10 s).
//
// A transaction ends at a ReadyForQuery ('Z') whose status is idle ('I') after at least one
// CommandComplete ('C') since the previous idle ReadyForQuery. It counts as a *writing commit*
// (one that assigns a transaction id, writes a commit record and waits for its fsync) when it
// did not end in ROLLBACK/error and either a command reported rows written (INSERT/UPDATE/
// DELETE/MERGE/COPY n > 0) or a statement took row locks (`for update`, `for no key update`,
// `for share`) and returned rows, or a WITH holding an INSERT, UPDATE or DELETE returned rows — what makes PostgreSQL assign an xid. Read-only transactions (the credential
// lookup, a poll that found nothing, an UPDATE that matched no row) are counted apart.
// Transactions whose statements all match BACKGROUND are the schedulers' own bookkeeping
// (pg-boss jobs, the outbox sender's per-kind backlog state), counted apart.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TransactionCounts {
  /** Every committed transaction, read-only ones included. */
  transactions: number;
  /** Committed transactions that wrote (or locked) rows: the fsync'd commits. */
  writing: number;
  /** Of `writing`, the service's background bookkeeping: every statement names the pgboss
   *  schema or the outbox sender's per-kind state (BACKGROUND). */
  writing_background: number;
  rolled_back: number;
  /** Statements answered (CommandComplete), in every transaction and outside any. */
  statements: number;
  /**
   * Times a connection sent something while it had nothing outstanding: the waits for an
   * answer before the next statement could go. Statements pipelined behind others (sent before
   * the answers to those came) share their round trip.
   */
  round_trips: number;
}

export interface TransactionCounter {
  readonly port: number;
  counts(): TransactionCounts;
  /** Statement texts of the foreground writing commits since the last call (for diagnosis). */
  takeLog(): string[][];
  /**
   * Every transaction (committed, rolled back or a lone statement) since the last call, with the
   * round trips it took, when started with `record: true`: what tests assert about one operation.
   */
  takeTransactions(): RecordedTransaction[];
  close(): Promise<void>;
}

export interface RecordedTransaction {
  statements: string[];
  round_trips: number;
  rolled_back: boolean;
}

const WRITE_TAG = /^(INSERT \d+|UPDATE|DELETE|MERGE|COPY) (\d+)$/;
const BACKGROUND = /pgboss\.|outbox_kind_states/;
const ROW_LOCK = /\bfor\s+(no\s+key\s+update|update|share|key\s+share)\b/i;
// A SELECT whose WITH holds a data-modifying statement (the inbox POST's one statement,
// runtime/stores/enqueue-input.ts) completes as `SELECT n`, whatever its CTEs wrote: it is
// counted as writing when it returned rows. (Its gate may have kept it from writing — a replay
// — which the wire does not show; the scenarios that count commits send no replays.)
const MODIFYING_CTE = /^\s*with\b[\s\S]*\b(insert\s+into|update\s+\w+\s+set|delete\s+from)\b/i;

/** Yields complete messages from a byte stream; `typed` false for the untyped startup message. */
class MessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  constructor(private typed: boolean) {}

  push(chunk: Buffer, onMessage: (type: string, body: Buffer) => void): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const header = this.typed ? 5 : 4;
      if (this.buffer.length < header) return;
      const length = this.buffer.readInt32BE(this.typed ? 1 : 0);
      const total = (this.typed ? 1 : 0) + length;
      if (this.buffer.length < total) return;
      const type = this.typed ? String.fromCharCode(this.buffer[0]!) : '';
      onMessage(type, this.buffer.subarray(header, total));
      this.buffer = this.buffer.subarray(total);
      this.typed = true; // after the startup message every message carries a type byte
    }
  }
}

function cString(body: Buffer, from: number): [string, number] {
  const end = body.indexOf(0, from);
  return [body.toString('utf8', from, end), end + 1];
}

export async function startTransactionCounter(target: { host: string; port: number }, options: { record?: boolean } = {}): Promise<TransactionCounter> {
  const logReadOnly = process.env.BENCH_DB_COMMITS_LOG === 'all';
  const counts: TransactionCounts = { transactions: 0, writing: 0, writing_background: 0, rolled_back: 0, statements: 0, round_trips: 0 };
  let log: string[][] = [];
  let recorded: RecordedTransaction[] = [];
  const sockets = new Set<Socket>();

  const onConnection = (client: Socket): void => {
    const server = connect(target.port, target.host);
    sockets.add(client).add(server);
    const fromClient = new MessageReader(false);
    const fromServer = new MessageReader(true);
    // Per connection: statements sent since the last idle ReadyForQuery, and what they did.
    let texts: string[] = [];
    let completed = 0;
    let wrote = false;
    let selected = false;
    let rolledBack = false;
    /** Syncs and simple queries sent whose ReadyForQuery has not come back yet. */
    let outstanding = 0;
    let started = false;
    /** Round trips of the transaction in progress on this connection. */
    let txRoundTrips = 0;
    /** Statements this connection prepared under a name: name → text. */
    const prepared = new Map<string, string>();
    client.on('data', (chunk: Buffer) => {
      if (started && outstanding === 0) {
        counts.round_trips++;
        txRoundTrips++;
      }
      started = true; // the startup exchange is not a statement's round trip
      fromClient.push(chunk, (type, body) => {
        if (type === 'S' || type === 'Q') outstanding++;
        if (type === 'Q') texts.push(cString(body, 0)[0]);
        // An unnamed statement's text comes with its Parse, every time; a named one's (the
        // service prepares its parameterized statements, runtime/db/pool.ts) with its first
        // Parse on the connection, and its executions name it in their Bind.
        if (type === 'P') {
          const [name, at] = cString(body, 0);
          const text = cString(body, at)[0];
          if (name) prepared.set(name, text);
          else texts.push(text);
        }
        if (type === 'B') {
          const statement = cString(body, cString(body, 0)[1])[0];
          if (statement) texts.push(prepared.get(statement) ?? `<prepared ${statement}>`);
        }
      });
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      fromServer.push(chunk, (type, body) => {
        if (type === 'Z') outstanding = Math.max(0, outstanding - 1);
        if (type === 'C') {
          const tag = cString(body, 0)[0];
          completed++;
          counts.statements++;
          const m = WRITE_TAG.exec(tag);
          if (m && Number(m[2]) > 0) wrote = true;
          if (/^SELECT [1-9]/.test(tag)) selected = true;
          if (tag === 'ROLLBACK') rolledBack = true;
        } else if (type === 'E') {
          rolledBack = true;
        } else if (type === 'Z' && body[0] === 0x49 /* 'I' */) {
          if (options.record && (completed > 0 || rolledBack) && outstanding === 0) recorded.push({ statements: texts, round_trips: txRoundTrips, rolled_back: rolledBack });
          if (outstanding === 0) txRoundTrips = 0;
          if (completed > 0 || rolledBack) {
            if (rolledBack) counts.rolled_back++;
            else {
              counts.transactions++;
              // BENCH_DB_COMMITS_LOG=all: read-only transactions are logged too (marked), for diagnosis
              if (logReadOnly && !(wrote || (selected && texts.some((t) => ROW_LOCK.test(t) || MODIFYING_CTE.test(t)))) && !texts.every((t) => BACKGROUND.test(t))) log.push(['(read-only)', ...texts]);
              if (wrote || (selected && texts.some((t) => ROW_LOCK.test(t) || MODIFYING_CTE.test(t)))) {
                counts.writing++;
                if (texts.every((t) => BACKGROUND.test(t))) counts.writing_background++;
                else log.push(texts);
              }
            }
          }
          texts = [];
          completed = 0;
          wrote = false;
          selected = false;
          rolledBack = false;
        }
      });
      client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  };

  const listener: Server = createServer(onConnection);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    counts: () => ({ ...counts }),
    takeTransactions: () => {
      const out = recorded;
      recorded = [];
      return out;
    },
    takeLog: () => {
      const out = log;
      log = [];
      return out;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
