// The sharded fan-out (api/streams/sharded-fanout.ts) on a real uWS app with real WebSocket
// clients, and SSE sinks: a record reaches every subscriber that joined before it exactly once
// and in order, whether its shard is served in the caller's turn or a later one, whether a
// subscriber joins while shards are still behind, and records that meet a shard's backlog go
// out with it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { EncodedRecord } from '../../../api/streams/stream-frames.js';
import { ShardedFanOut } from '../../../api/streams/sharded-fanout.js';
import type { WsPlacement } from '../../../api/streams/stream-subscriber.js';
import { loadUws, type StreamEvent, type Uws } from '../../../runtime/index.js';

const test = suite('api/streams/sharded-fanout');
const uws = loadUws();

interface Peer {
  readonly client: WebSocket;
  readonly received: string[];
  server: Uws.WebSocket<{ n: number }> | null;
  placement: WsPlacement | null;
}

let app: Uws.TemplatedApp;
let listen: Uws.us_listen_socket | null = null;
let port = 0;
const servers = new Map<number, Uws.WebSocket<{ n: number }>>();
/** Every publish as the fan-out makes it: the topic, in call order. */
let publishes: string[] = [];
let seq = 0;

test.before(async () => {
  app = uws.App();
  app.ws<{ n: number }>('/*', {
    upgrade: (res, req, context) => {
      const n = Number(req.getQuery('n'));
      res.upgrade({ n }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    },
    open: (ws) => void servers.set(ws.getUserData().n, ws),
    close: (ws) => void servers.delete(ws.getUserData().n),
  });
  await new Promise<void>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('listen failed'));
      listen = socket;
      port = uws.us_socket_local_port(socket);
      resolve();
    }),
  );
});

const opened: WebSocket[] = [];

test.after(() => {
  // Every client, also those of a failed test, so no socket keeps the file's process alive.
  for (const client of opened) client.terminate();
  for (const ws of servers.values()) {
    try {
      ws.close();
    } catch {
      // already closed by its client
    }
  }
  if (listen) uws.us_listen_socket_close(listen);
});

/** The app as the fan-out sees it, with its publishes recorded (the real app still sends them). */
function spied(): Uws.TemplatedApp {
  return new Proxy(app, {
    get(target, key) {
      if (key === 'publish') {
        return (topic: string, message: Uws.RecognizedString, binary?: boolean, compress?: boolean) => {
          publishes.push(topic);
          return target.publish(topic, message, binary, compress);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function connect(): Promise<Peer> {
  const n = ++seq;
  const client = new WebSocket(`ws://127.0.0.1:${port}/?n=${n}`);
  opened.push(client);
  const peer: Peer = { client, received: [], server: null, placement: null };
  client.on('message', (data) => peer.received.push((JSON.parse(String(data)) as { id: string }).id));
  await new Promise<void>((resolve, reject) => {
    client.once('open', () => resolve());
    client.once('error', reject);
  });
  for (let i = 0; i < 200 && !servers.has(n); i++) await new Promise((r) => setTimeout(r, 5));
  peer.server = servers.get(n) ?? null;
  assert.ok(peer.server, 'the server saw the socket open');
  return peer;
}

/** What the stream hub's attach does: place, then subscribe, in one synchronous step. */
function join(fanOut: ShardedFanOut, peer: Peer): void {
  peer.placement = fanOut.joinWs('json');
  peer.server!.subscribe(peer.placement.topic);
}

function records(...ids: string[]): EncodedRecord[] {
  return ids.map((id) => new EncodedRecord({ id, event: { type: 'item.delta', text: id } as unknown as StreamEvent }));
}

const turn = () => new Promise((r) => setImmediate(r));

async function settle(peers: Peer[], expected: (p: Peer) => number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (peers.every((p) => p.received.length >= expected(p))) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 30)); // a duplicate would have arrived by now
}

test('a thread within one shard is published in the caller turn, as one topic was', async () => {
  publishes = [];
  const fanOut = new ShardedFanOut(spied(), 'thread:one', { shardSize: 8, maxShards: 4, slice: 4 });
  const peers = await Promise.all([connect(), connect(), connect()]);
  for (const p of peers) join(fanOut, p);
  fanOut.enqueue(records('1-0', '2-0'));
  assert.equal(publishes, ['thread:one:json:0', 'thread:one:json:0'], 'both records published before enqueue returned');
  await settle(peers, () => 2);
  for (const p of peers) assert.equal(p.received, ['1-0', '2-0']);
  fanOut.close();
  for (const p of peers) p.client.close();
});

test('shards beyond the slice are served on later turns; a record that meets a backlog goes out with it', async () => {
  publishes = [];
  const fanOut = new ShardedFanOut(spied(), 'thread:many', { shardSize: 2, maxShards: 4, slice: 3 });
  const peers: Peer[] = [];
  for (let i = 0; i < 8; i++) peers.push(await connect());
  for (const p of peers) join(fanOut, p);
  assert.equal(new Set(peers.map((p) => p.placement!.shard)), new Set([0, 1, 2, 3]), 'eight subscribers over four shards of two');

  fanOut.enqueue(records('1-0'));
  // Shards 0 and 1 (four sockets) spend the slice of three: the rest waits for the next turn.
  assert.equal(publishes, ['thread:many:json:0', 'thread:many:json:1']);
  fanOut.enqueue(records('2-0'));
  // Same turn, slice spent again from shard 2 on: shards 2 and 3 get both records, then 0 and 1 wait.
  assert.equal(publishes.slice(2), ['thread:many:json:2', 'thread:many:json:2', 'thread:many:json:3', 'thread:many:json:3']);
  await turn();
  assert.equal(publishes.slice(6), ['thread:many:json:0', 'thread:many:json:1'], 'the next turn serves the shards still behind');
  await settle(peers, () => 2);
  for (const p of peers) assert.equal(p.received, ['1-0', '2-0'], `subscriber on shard ${p.placement!.shard}`);
  fanOut.close();
  for (const p of peers) p.client.close();
});

test('a subscriber that joins while its shard is behind gets every later record once, in order', async () => {
  const fanOut = new ShardedFanOut(spied(), 'thread:join', { shardSize: 2, maxShards: 3, slice: 2 });
  const peers: Peer[] = [];
  const joinedAt = new Map<Peer, number>();
  const all: string[] = [];
  let next = 1;
  const emit = (n: number) => {
    const ids = Array.from({ length: n }, () => `${next++}-0`);
    all.push(...ids);
    fanOut.enqueue(records(...ids));
  };
  for (let round = 0; round < 12; round++) {
    const peer = await connect();
    peers.push(peer);
    // Joins land between enqueues and the pump's later turns, with shards behind head.
    emit(1 + (round % 3));
    join(fanOut, peer);
    joinedAt.set(peer, all.length);
    emit(1);
    if (round % 2 === 0) await turn();
  }
  emit(2);
  await settle(peers, (p) => all.length - joinedAt.get(p)!);
  for (const p of peers) assert.equal(p.received, all.slice(joinedAt.get(p)!), `shard ${p.placement!.shard}, joined after ${joinedAt.get(p)}`);
  fanOut.close();
  for (const p of peers) p.client.close();
});

test('leaving frees a place in the shard; close stops the later turns', async () => {
  publishes = [];
  const fanOut = new ShardedFanOut(spied(), 'thread:leave', { shardSize: 1, maxShards: 4, slice: 1 });
  const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
  for (const p of [a!, b!]) join(fanOut, p);
  assert.equal([a!.placement!.shard, b!.placement!.shard], [0, 1]);
  fanOut.leaveWs(a!.placement!, 'json');
  a!.server!.unsubscribe(a!.placement!.topic);
  join(fanOut, c!);
  assert.is(c!.placement!.shard, 0, 'the freed place is taken before a new shard opens');
  fanOut.enqueue(records('1-0'));
  assert.equal(publishes, ['thread:leave:json:0']);
  fanOut.close();
  await turn();
  await turn();
  assert.equal(publishes, ['thread:leave:json:0'], 'no turn after close');
  for (const p of [a!, b!, c!]) p.client.close();
});

/** An SSE subscriber as the fan-out sees it: the ids of the chunks written to it, and how many writes. */
function sseSink() {
  const sink = { ids: [] as string[], writes: 0, write: (chunk: string) => (sink.writes++, sink.ids.push(...[...chunk.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!))) };
  return sink;
}

test('SSE subscribers share the shards: sliced turns, backlogs merged into one write, joiners flushed first', async () => {
  publishes = [];
  const fanOut = new ShardedFanOut(spied(), 'thread:sse', { shardSize: 2, maxShards: 3, slice: 2 });
  const sinks = Array.from({ length: 6 }, () => sseSink());
  const placed = sinks.map((s) => fanOut.joinSse(s));
  assert.equal(placed.map((p) => p.shard), [0, 0, 1, 1, 2, 2]);
  fanOut.enqueue(records('1-0'));
  assert.equal(sinks.map((s) => s.ids.length), [1, 1, 0, 0, 0, 0], 'one shard (two sinks) in the caller turn');
  fanOut.enqueue(records('2-0'));
  assert.equal(sinks.map((s) => s.writes), [1, 1, 1, 1, 0, 0], 'shard 1 got both records in one write');
  // A joiner placed in a shard that is behind: the shard is flushed first, the joiner gets only later records.
  const late = sseSink();
  fanOut.leaveSse(placed[5]!, sinks[5]!);
  const latePlaced = fanOut.joinSse(late);
  assert.is(latePlaced.shard, 2);
  assert.equal(sinks[4]!.ids, ['1-0', '2-0'], 'shard 2 flushed before the joiner entered');
  fanOut.enqueue(records('3-0'));
  await turn();
  await turn();
  assert.equal(late.ids, ['3-0']);
  for (const [i, s] of sinks.entries()) assert.equal(s.ids, i === 5 ? [] : ['1-0', '2-0', '3-0'], `sink ${i}`);
  assert.equal(publishes, [], 'no WebSocket subscriber, no publish');
  fanOut.close();
});

test.run();
