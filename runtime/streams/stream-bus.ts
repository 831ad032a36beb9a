import type { EventEmitter } from 'node:events';
import type { StreamEvent, StreamRecord, TailSnapshot } from './stream-event.js';

export type OnStreamRecords = (threadId: string, records: StreamRecord[]) => void;

/** Live records of the threads it follows, each thread's in stream order, without gap or repeat. */
export interface StreamFollower {
  /** Delivers every record after `afterId` of the thread (replacing an earlier follow of it). */
  follow(threadId: string, afterId: string): void;
  unfollow(threadId: string): void;
  /** Stops following every thread (the store was lost: cursors are no longer trustworthy). */
  unfollowAll(): void;
  close(): void;
}

/** A page of a thread's stream after some id; `trimmed` when records after that id were dropped. */
export interface StreamPage {
  records: StreamRecord[];
  trimmed: boolean;
}

/** How a publish leaves. */
export interface PublishOptions {
  /** What a client waits for first (a run's first event, its first delta): never held to the end of a batch. */
  urgent?: boolean;
  /**
   * The attempt of a run that publishes (its tail's events): refused whole — every id null,
   * nothing written — once a later attempt of the run has anchored its tail (publishAnchored,
   * setTail), also after that attempt sealed the run. A zombie attempt's events never follow
   * its successor's.
   */
  fence?: { run_id: string; attempt: number };
}

/**
 * Carries thread events from the process that produces them (the attempt's host) to the
 * processes that serve subscribers. Redis: one stream per thread (XADD with an approximate
 * MAXLEN bound and a TTL), ids are Redis stream ids and totally ordered per thread. The
 * in-process bus (single `all` process) keeps the same contract in memory.
 * Publishing never blocks the run: while the store is lost, publish resolves with nulls and
 * the items still commit to PostgreSQL (clients re-read GET /runs/{id}/items).
 */
export interface StreamBus {
  publish(threadId: string, events: StreamEvent[], options?: PublishOptions): Promise<Array<string | null>>;
  /**
   * Anchors a run's tail (its snapshot becomes "no items, at the stream's current last id")
   * and then publishes `events`, in that order and in one round trip. `anchored` false: the
   * store did not take the anchor — lost, or a later attempt of the run holds the run (its
   * fence, see PublishOptions) — and the events, fenced by the anchoring attempt, with it.
   */
  publishAnchored(threadId: string, tail: { run_id: string; attempt: number }, events: StreamEvent[], options?: PublishOptions): Promise<{ anchored: boolean; ids: Array<string | null> }>;
  /**
   * Up to `count` records after `afterId` (exclusive), oldest first. `trimmed` is true when a
   * record after `afterId` was removed by the length bound, so replaying from the retained
   * window would skip events: the reader must start over from GET /runs/{id}/items.
   */
  read(threadId: string, afterId: string, count: number): Promise<StreamPage>;
  lastId(threadId: string): Promise<string | null>;
  /**
   * Stores the run's tail snapshot; false when the store could not take it (lost) or refused it:
   * a snapshot never replaces one of a later attempt of the run, so a zombie attempt cannot
   * overwrite its successor's tail.
   */
  setTail(snapshot: TailSnapshot): Promise<boolean>;
  getTail(runId: string): Promise<TailSnapshot | null>;
  clearTail(runId: string): Promise<void>;
  /**
   * A live reader for the fan-out: one per serving process, delivering each followed thread's
   * new records in order (Redis: one XREAD BLOCK loop on its own connection for every followed
   * thread; memory: the publish path itself).
   */
  follower(onRecords: OnStreamRecords, onError: (error: unknown) => void): StreamFollower;
  /** Live records as they are published (memory bus only; the Redis fan-out reads with XREAD). */
  readonly local: EventEmitter | null;
}

export const STREAM_MAXLEN = 10_000;
export const STREAM_TTL_SECONDS = 24 * 3600;
export const TAIL_TTL_SECONDS = 3600;
