import type { ChainableCommander, Redis } from 'ioredis';
import { CommandBatcher } from './command-batcher.js';
import type { Kv } from '../kv/index.js';
import { RedisStreamFollower } from './redis-stream-follower.js';
import { STREAM_MAXLEN, STREAM_TTL_SECONDS, TAIL_TTL_SECONDS, type OnStreamRecords, type PublishOptions, type StreamBus, type StreamFollower, type StreamPage } from './stream-bus.js';
import type { StreamEvent, TailSnapshot } from './stream-event.js';
import { STREAM_START_ID, compareStreamIds } from './stream-ids.js';

/** XINFO STREAM answers a flat [name, value, …] list. */
function infoField(info: unknown, name: string): unknown {
  if (!Array.isArray(info)) return undefined;
  for (let i = 0; i + 1 < info.length; i += 2) if (info[i] === name) return info[i + 1];
  return undefined;
}

/**
 * Whether records after `afterId` were trimmed. Trimming (the only deletion: XDEL is never used)
 * removes the oldest records, so on Redis 7 — which counts `entries-added` — records were lost
 * after `afterId` when some were ever removed (added > length) and `afterId` lies before the
 * oldest retained one. (A client whose last id was exactly the last trimmed one is also told to
 * start over: harmless, it re-reads the items.) A stream recreated after the store lost its data
 * counts from zero again, so ids recorded on items before the loss resume into it. Older servers
 * lack the counter: then a page that starts at the oldest retained record, beyond `afterId`,
 * counts as trimmed.
 */
function wasTrimmed(afterId: string, info: unknown, firstPageId: string | undefined): boolean {
  const first = infoField(info, 'first-entry');
  const oldest = Array.isArray(first) && typeof first[0] === 'string' ? first[0] : undefined;
  const added = infoField(info, 'entries-added');
  const length = infoField(info, 'length');
  if (oldest === undefined) return false;
  if (typeof added === 'number' && typeof length === 'number') return added > length && compareStreamIds(afterId, oldest) < 0;
  return afterId !== STREAM_START_ID && compareStreamIds(afterId, oldest) < 0 && firstPageId === oldest;
}

/**
 * A run's tail snapshot is never replaced by one of an earlier attempt (refuseIfLaterAttemptHolds,
 * in both scripts below): a zombie attempt — stopped while its lease ran out, resumed before its next
 * fenced write tells it so — must not overwrite its successor's snapshot, which GET
 * /runs/{id}/items serves as the running attempt's tail. Every snapshot's JSON starts with
 * `{"run_id":"…","attempt":N` (tailJson), so the stored attempt is read without decoding the
 * items. `tailKey` and `attempt` name the script's KEYS and ARGV entries that hold them.
 */
const refuseIfLaterAttemptHolds = (tailKey: string, attempt: string): string => `local cur = redis.call('GET', ${tailKey})
if cur then
  local held = tonumber(string.match(cur, '^{"run_id":"[^"]*","attempt":(%d+)'))
  if held and held > tonumber(${attempt}) then return redis.error_reply('STALE a later attempt holds the tail') end
end
`;

/**
 * The run's fence (see PUBLISH_FENCED_SCRIPT): raised to `attempt` when it is higher, kept for
 * STREAM_TTL_SECONDS (the stream's own lifetime). `fenceKey` and `attempt` name KEYS/ARGV entries.
 */
const raiseFence = (fenceKey: string, attempt: string): string => `if tonumber(redis.call('GET', ${fenceKey}) or '0') < tonumber(${attempt}) then
  redis.call('SET', ${fenceKey}, ${attempt}, 'EX', ${STREAM_TTL_SECONDS})
end
`;

/** Refuses when the run's fence (see raiseFence) is past `attempt`: a later attempt anchored, even if its seal cleared the snapshot since. */
const refuseIfFenced = (fenceKey: string, attempt: string): string => `if tonumber(redis.call('GET', ${fenceKey}) or '0') > tonumber(${attempt}) then return redis.error_reply('STALE a later attempt holds the run') end
`;

/** setTail: the snapshot (ARGV[1]) for ARGV[2] seconds, unless a later attempt holds it or the run's fence (KEYS[2]); raises the fence. */
const SET_TAIL_SCRIPT = `${refuseIfLaterAttemptHolds('KEYS[1]', 'ARGV[3]')}${refuseIfFenced('KEYS[2]', 'ARGV[3]')}${raiseFence('KEYS[2]', 'ARGV[3]')}redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1`;

/**
 * The anchor of a tail (see LiveTail) in one step on the server: the stream's last id, and the
 * run's snapshot "no items yet, at that id" (ARGV[1] .. id .. ARGV[2] is its JSON), unless a
 * later attempt holds the snapshot (ARGV[4] is the anchoring attempt). Sent in the same
 * pipeline as the tail's first XADDs, which Redis applies after it.
 */
const ANCHOR_SCRIPT = `${refuseIfLaterAttemptHolds('KEYS[2]', 'ARGV[4]')}${refuseIfFenced('KEYS[3]', 'ARGV[4]')}${raiseFence('KEYS[3]', 'ARGV[4]')}local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local id = '0-0'
if last[1] then id = last[1][1] end
redis.call('SET', KEYS[2], ARGV[1] .. id .. ARGV[2], 'EX', ARGV[3])
return id`;

/**
 * A run's events, published by one of its attempts (PublishOptions.fence), in one step on the
 * server: refused whole (STALE, nothing written) when a later attempt of the run has anchored
 * its tail — the run's fence (KEYS[2]) is the highest attempt whose anchor or snapshot Redis
 * took, and it outlives the snapshot (a seal clears the snapshot, not the fence). So a zombie
 * attempt — stopped past its lease, resumed before its next fenced database write tells it so —
 * publishes nothing after its successor's first event (the successor's `tail.reset` is its
 * anchored publish, AttemptRunner), nor after the successor sealed the run.
 * KEYS[1] the stream; ARGV[1] the attempt, ARGV[2] MAXLEN, ARGV[3] the stream's TTL, ARGV[4]
 * '1' to answer the stream's last id before the records (local delivery, RedisStreamBus.offer;
 * '' otherwise), ARGV[5…] the events' JSON. Answers {that id or '', the records' ids…}.
 */
const PUBLISH_FENCED_SCRIPT = `${refuseIfFenced('KEYS[2]', 'ARGV[1]')}local out = {''}
if ARGV[4] == '1' then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  out[1] = '0-0'
  if last[1] then out[1] = last[1][1] end
end
for i = 5, #ARGV do out[#out + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[i]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return out`;

/** A snapshot's JSON with run_id and attempt first, as refuseIfLaterAttemptHolds reads them. */
function tailJson(snapshot: TailSnapshot): string {
  const { run_id, attempt, ...rest } = snapshot;
  return JSON.stringify({ run_id, attempt, ...rest });
}

export class RedisStreamBus implements StreamBus {
  readonly local = null;
  /** Every write of the hosted runs' streams and tails goes through one batcher (one pipeline per round trip). */
  private readonly writes: CommandBatcher;
  /** This process's fan-out readers (one per StreamHub): offered what this process publishes. */
  private readonly followers = new Set<RedisStreamFollower>();

  constructor(
    private readonly redis: Redis,
    private readonly kv: Kv,
  ) {
    this.writes = new CommandBatcher(redis);
  }

  private key = (threadId: string) => `${this.kv.prefix}stream:${threadId}`;
  private tailKey = (runId: string) => `${this.kv.prefix}tail:${runId}`;
  private fenceKey = (runId: string) => `${this.kv.prefix}fence:${runId}`;

  private addEvents(pipeline: ChainableCommander, key: string, jsons: string[]): void {
    for (const json of jsons) pipeline.xadd(key, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', json);
    pipeline.expire(key, STREAM_TTL_SECONDS);
  }

  /** Whether a fan-out reader of this process follows the thread (its publishes are offered to it). */
  private followedHere(threadId: string): boolean {
    for (const follower of this.followers) if (follower.isFollowing(threadId)) return true;
    return false;
  }

  /**
   * Local delivery: the records just published, handed to this process's fan-out readers at
   * once instead of one XREAD later (RedisStreamFollower.offer). `previous` is the reply to the
   * XREVRANGE that ran right before the XADDs in the same MULTI — the record that preceded
   * them, or none (the stream was empty or missing) — so a reader takes them only when it has
   * delivered exactly up to there. Nothing is offered when a command failed (previousId null,
   * or an id missing).
   */
  private offer(threadId: string, previousId: string | null, events: StreamEvent[], jsons: string[], ids: Array<string | null>): void {
    if (previousId === null || ids.some((id) => id === null)) return;
    const records = events.map((event, i) => ({ id: ids[i]!, event, json: jsons[i]! }));
    for (const follower of this.followers) follower.offer(threadId, previousId, records);
  }

  async publish(threadId: string, events: StreamEvent[], options: PublishOptions = {}): Promise<Array<string | null>> {
    if (events.length === 0 || this.kv.state() !== 'ready') return events.map(() => null);
    const key = this.key(threadId);
    const jsons = events.map((event) => JSON.stringify(event));
    if (options.fence) return this.publishFenced(threadId, options.fence, events, jsons, options.urgent);
    // A thread followed here reads its last id first, atomically with the XADDs (see offer).
    const local = this.followedHere(threadId);
    const first = local ? 1 : 0;
    const replies = await this.writes.run(
      (p) => {
        if (local) p.xrevrange(key, '+', '-', 'COUNT', 1);
        this.addEvents(p, key, jsons);
      },
      events.length + 1 + first,
      events.length,
      local,
      options.urgent,
    );
    const ids = events.map((_, i) => {
      const [error, id] = replies[i + first] ?? [new Error('missing'), null];
      return error ? null : (id as string);
    });
    if (local) {
      // XREVRANGE … COUNT 1 answers [[id, fields]], or [] for an empty or missing stream.
      const [error, last] = replies[0] ?? [new Error('missing'), null];
      const previousId = error ? null : Array.isArray(last) && Array.isArray(last[0]) ? String(last[0][0]) : STREAM_START_ID;
      this.offer(threadId, previousId, events, jsons, ids);
    }
    return ids;
  }

  /**
   * An attempt's events through PUBLISH_FENCED_SCRIPT: one command, so one record as far as the
   * batcher's MULTI is concerned (its XADDs become visible together, when the script ends).
   * Refused (a later attempt holds the run) or failed: every id null, nothing offered.
   */
  private async publishFenced(threadId: string, fence: { run_id: string; attempt: number }, events: StreamEvent[], jsons: string[], urgent?: boolean): Promise<Array<string | null>> {
    const local = this.followedHere(threadId);
    const [reply] = await this.writes.run(
      (p) => p.eval(PUBLISH_FENCED_SCRIPT, 2, this.key(threadId), this.fenceKey(fence.run_id), fence.attempt, STREAM_MAXLEN, STREAM_TTL_SECONDS, local ? '1' : '', ...jsons),
      1,
      1,
      false,
      urgent,
    );
    const [error, answer] = reply ?? [new Error('missing'), null];
    if (error || !Array.isArray(answer) || answer.length !== events.length + 1) return events.map(() => null);
    const ids = answer.slice(1).map((id) => String(id));
    if (local) this.offer(threadId, String(answer[0]), events, jsons, ids);
    return ids;
  }

  async publishAnchored(threadId: string, tail: { run_id: string; attempt: number }, events: StreamEvent[], options: PublishOptions = {}): Promise<{ anchored: boolean; ids: Array<string | null> }> {
    if (this.kv.state() !== 'ready') return { anchored: false, ids: events.map(() => null) };
    const key = this.key(threadId);
    // The snapshot's JSON around the id the script finds (same shape as setTail writes).
    const json = tailJson({ run_id: tail.run_id, attempt: tail.attempt, items: [], last_stream_id: '\u0000' });
    const [before, after] = json.split('"\\u0000"') as [string, string];
    const jsons = events.map((event) => JSON.stringify(event));
    // The events are fenced by the anchoring attempt (PUBLISH_FENCED_SCRIPT): when the anchor is
    // refused because a later attempt holds the run, so are they. The script answers their
    // predecessor itself, for a reader of this process to take them at once (offer).
    const local = events.length > 0 && this.followedHere(threadId);
    const replies = await this.writes.run(
      (p) => {
        p.eval(ANCHOR_SCRIPT, 3, key, this.tailKey(tail.run_id), this.fenceKey(tail.run_id), `${before}"`, `"${after}`, TAIL_TTL_SECONDS, tail.attempt);
        if (events.length > 0) p.eval(PUBLISH_FENCED_SCRIPT, 2, key, this.fenceKey(tail.run_id), tail.attempt, STREAM_MAXLEN, STREAM_TTL_SECONDS, local ? '1' : '', ...jsons);
      },
      events.length > 0 ? 2 : 1,
      events.length > 0 ? 1 : 0,
      false,
      options.urgent,
    );
    const anchored = !replies[0]?.[0];
    const [error, answer] = replies[1] ?? [new Error('missing'), null];
    if (events.length === 0 || error || !Array.isArray(answer) || answer.length !== events.length + 1) return { anchored, ids: events.map(() => null) };
    const ids = answer.slice(1).map((id) => String(id));
    if (local) this.offer(threadId, String(answer[0]), events, jsons, ids);
    return { anchored, ids };
  }


  async read(threadId: string, afterId: string, count: number): Promise<StreamPage> {
    const key = this.key(threadId);
    // One round trip: the page and the stream's trim record (XINFO fails on a missing key,
    // which simply means nothing was ever trimmed that this process can know of).
    const results = (await this.redis.pipeline().xrange(key, `(${afterId}`, '+', 'COUNT', count).xinfo('STREAM', key).exec()) ?? [];
    const [rangeError, range] = results[0] ?? [new Error('no reply'), null];
    if (rangeError) throw rangeError;
    const entries = (range ?? []) as Array<[string, string[]]>;
    const info = results[1]?.[0] ? null : results[1]?.[1];
    const records = entries.map(([id, fields]) => ({ id, event: JSON.parse(fields[1] ?? 'null') as StreamEvent, json: fields[1] ?? 'null' }));
    return { records, trimmed: info !== null && wasTrimmed(afterId, info, entries[0]?.[0]) };
  }

  async lastId(threadId: string): Promise<string | null> {
    // Rejects while the store is lost (no offline queue): "unknown" is not "empty".
    const last = await this.redis.xrevrange(this.key(threadId), '+', '-', 'COUNT', 1);
    return last[0]?.[0] ?? null;
  }

  follower(onRecords: OnStreamRecords, onError: (error: unknown) => void): StreamFollower {
    const follower = new RedisStreamFollower(this.kv, this.key, onRecords, onError, () => this.followers.delete(follower));
    this.followers.add(follower);
    return follower;
  }

  async setTail(snapshot: TailSnapshot): Promise<boolean> {
    if (this.kv.state() !== 'ready') return false;
    // Refused (false) when a later attempt holds the snapshot (SET_TAIL_SCRIPT).
    const [reply] = await this.writes.run((p) => p.eval(SET_TAIL_SCRIPT, 2, this.tailKey(snapshot.run_id), this.fenceKey(snapshot.run_id), tailJson(snapshot), TAIL_TTL_SECONDS, snapshot.attempt), 1);
    return !reply?.[0];
  }

  async getTail(runId: string): Promise<TailSnapshot | null> {
    if (this.kv.state() !== 'ready') return null;
    const text = await this.redis.get(`${this.kv.prefix}tail:${runId}`).catch(() => null);
    return text ? (JSON.parse(text) as TailSnapshot) : null;
  }

  async clearTail(runId: string): Promise<void> {
    if (this.kv.state() !== 'ready') return;
    // Through the batcher: never ahead of a snapshot of the same run queued before it.
    await this.writes.run((p) => p.del(this.tailKey(runId)), 1);
  }
}
