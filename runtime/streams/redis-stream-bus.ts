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
 * Each run has a fence: the highest attempt whose tail anchor or snapshot Redis took (raised by
 * both scripts below), kept for STREAM_TTL_SECONDS — as long as the stream, past the snapshot,
 * which the run's seal clears. Whatever an attempt writes for its run — snapshots, anchors,
 * events (PublishOptions.fence) — is refused (STALE, nothing written) once the fence is past it.
 * So a zombie attempt — stopped or cut off from the database while its lease ran out, not yet
 * told by a fenced database write — overwrites nothing of its successor's (GET /runs/{id}/items
 * serves the snapshot as the running attempt's tail) and publishes nothing after its successor's
 * first event (its `tail.reset`, an anchored publish: AttemptRunner), nor after the run's seal.
 * `fenceKey` and `attempt` name the script's KEYS and ARGV entries that hold them.
 */
const refuseBehindFence = (fenceKey: string, attempt: string): string =>
  `if tonumber(redis.call('GET', ${fenceKey}) or '0') > tonumber(${attempt}) then return redis.error_reply('STALE a later attempt holds the run') end
`;
/** refuseBehindFence, then the fence raised to the attempt (a snapshot or an anchor). */
const checkAndRaiseFence = (fenceKey: string, attempt: string): string => `${refuseBehindFence(fenceKey, attempt)}redis.call('SET', ${fenceKey}, ${attempt}, 'EX', ${STREAM_TTL_SECONDS})
`;

/** The stream's (KEYS[1]) last id into the Lua local `into`, '0-0' for an empty or missing stream. */
const lastIdInto = (into: string): string => `local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
${into} = '0-0'
if last[1] then ${into} = last[1][1] end
`;

/** setTail: the snapshot (ARGV[1]) for ARGV[2] seconds, unless the run's fence (KEYS[2]) is past its attempt (ARGV[3]). */
const SET_TAIL_SCRIPT = `${checkAndRaiseFence('KEYS[2]', 'ARGV[3]')}redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1`;

/**
 * The anchor of a tail (see LiveTail) in one step on the server: the stream's last id, and the
 * run's snapshot "no items yet, at that id" (ARGV[1] .. id .. ARGV[2] is its JSON), unless the
 * run's fence (KEYS[3]) is past the anchoring attempt (ARGV[4]). Sent in the same pipeline as
 * the tail's first events, which Redis applies after it.
 */
const ANCHOR_SCRIPT = `${checkAndRaiseFence('KEYS[3]', 'ARGV[4]')}local id
${lastIdInto('id')}redis.call('SET', KEYS[2], ARGV[1] .. id .. ARGV[2], 'EX', ARGV[3])
return id`;

/**
 * Events in one step on the server. KEYS[1] the stream; KEYS[2], when given, the run's fence,
 * with ARGV[1] the publishing attempt (refused whole when the fence is past it, see above).
 * ARGV[2] MAXLEN, ARGV[3] the stream's TTL, ARGV[4] '1' to answer the stream's last id before
 * the records (local delivery, RedisStreamBus.offer; '' otherwise), ARGV[5…] the events' JSON.
 * Answers {that id or '', the records' ids…}. One command: its XADDs become visible to blocked
 * readers together, when it ends.
 */
const PUBLISH_SCRIPT = `if KEYS[2] then
${refuseBehindFence('KEYS[2]', 'ARGV[1]')}end
local previous = ''
if ARGV[4] == '1' then
${lastIdInto('previous')}end
local out = {previous}
for i = 5, #ARGV do out[#out + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[i]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return out`;

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

  /** Adds the PUBLISH_SCRIPT command of `jsons` to `pipeline`, fenced by `fence` when given. */
  private addPublish(pipeline: ChainableCommander, threadId: string, jsons: string[], fence: { run_id: string; attempt: number } | undefined, local: boolean): void {
    const keys = fence ? [this.key(threadId), this.fenceKey(fence.run_id)] : [this.key(threadId)];
    pipeline.eval(PUBLISH_SCRIPT, keys.length, ...keys, fence?.attempt ?? '', STREAM_MAXLEN, STREAM_TTL_SECONDS, local ? '1' : '', ...jsons);
  }

  /** The ids PUBLISH_SCRIPT answered (all null when refused or failed), offered to this process's readers when `local`. */
  private published(threadId: string, reply: [Error | null, unknown] | undefined, events: StreamEvent[], jsons: string[], local: boolean): Array<string | null> {
    const [error, answer] = reply ?? [new Error('missing'), null];
    if (error || !Array.isArray(answer) || answer.length !== events.length + 1) return events.map(() => null);
    const ids = answer.slice(1).map((id) => String(id));
    if (local) this.offer(threadId, String(answer[0]), events, jsons, ids);
    return ids;
  }

  /** Whether a fan-out reader of this process follows the thread (its publishes are offered to it). */
  private followedHere(threadId: string): boolean {
    for (const follower of this.followers) if (follower.isFollowing(threadId)) return true;
    return false;
  }

  /**
   * Local delivery: the records just published, handed to this process's fan-out readers at
   * once instead of one XREAD later (RedisStreamFollower.offer). `previousId` is the stream's
   * last id as PUBLISH_SCRIPT read it right before its XADDs, in the same atomic step — the
   * record that preceded them, or '0-0' — so a reader takes them only when it has delivered
   * exactly up to there.
   */
  private offer(threadId: string, previousId: string, events: StreamEvent[], jsons: string[], ids: string[]): void {
    const records = events.map((event, i) => ({ id: ids[i]!, event, json: jsons[i]! }));
    for (const follower of this.followers) follower.offer(threadId, previousId, records);
  }

  async publish(threadId: string, events: StreamEvent[], options: PublishOptions = {}): Promise<Array<string | null>> {
    if (events.length === 0 || this.kv.state() !== 'ready') return events.map(() => null);
    const jsons = events.map((event) => JSON.stringify(event));
    const local = this.followedHere(threadId);
    const [reply] = await this.writes.run((p) => this.addPublish(p, threadId, jsons, options.fence, local), 1, 1, options.urgent);
    return this.published(threadId, reply, events, jsons, local);
  }

  async publishAnchored(threadId: string, tail: { run_id: string; attempt: number }, events: StreamEvent[], options: PublishOptions = {}): Promise<{ anchored: boolean; ids: Array<string | null> }> {
    if (this.kv.state() !== 'ready') return { anchored: false, ids: events.map(() => null) };
    // The snapshot's JSON around the id the script finds (same shape as setTail writes).
    const json = JSON.stringify({ run_id: tail.run_id, attempt: tail.attempt, items: [], last_stream_id: '\u0000' });
    const [before, after] = json.split('"\\u0000"') as [string, string];
    const jsons = events.map((event) => JSON.stringify(event));
    // The events are fenced by the anchoring attempt: refused when its anchor is.
    const local = events.length > 0 && this.followedHere(threadId);
    const replies = await this.writes.run(
      (p) => {
        p.eval(ANCHOR_SCRIPT, 3, this.key(threadId), this.tailKey(tail.run_id), this.fenceKey(tail.run_id), `${before}"`, `"${after}`, TAIL_TTL_SECONDS, tail.attempt);
        if (events.length > 0) this.addPublish(p, threadId, jsons, tail, local);
      },
      events.length > 0 ? 2 : 1,
      events.length > 0 ? 1 : 0,
      options.urgent,
    );
    return { anchored: !replies[0]?.[0], ids: events.length > 0 ? this.published(threadId, replies[1], events, jsons, local) : [] };
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
    // Refused (false) when a later attempt holds the run (SET_TAIL_SCRIPT).
    const [reply] = await this.writes.run((p) => p.eval(SET_TAIL_SCRIPT, 2, this.tailKey(snapshot.run_id), this.fenceKey(snapshot.run_id), JSON.stringify(snapshot), TAIL_TTL_SECONDS, snapshot.attempt), 1);
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
