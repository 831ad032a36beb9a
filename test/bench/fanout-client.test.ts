// The native fan-out load generator (bench/fanout-client.c) against a local WebSocket server:
// it upgrades with the subprotocol and bearer key, retries a refused upgrade, reports `live`
// once every socket has its stream.live, answers pings, and stamps every delta's marks.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocketServer, type WebSocket } from 'ws';

const SOURCE = fileURLToPath(new URL('../../../bench/fanout-client.c', import.meta.url));
const test = suite('bench/fanout-client.c');

test('subscribes every socket, answers pings and reports each delta mark per socket', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fanout-client-test-'));
  const binary = join(dir, 'fanout-client');
  const built = spawnSync('cc', ['-O2', '-Wall', '-Werror', '-o', binary, SOURCE], { encoding: 'utf8' });
  assert.is(built.status, 0, `cc: ${built.stderr}`);

  const sockets: WebSocket[] = [];
  const seen: Array<{ protocol: string; auth: string | undefined }> = [];
  let refusals = 1; // the first upgrade is refused with 503 and must be retried
  let pongs = 0;
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => [...protocols][0] ?? false,
    verifyClient: (_info, done) => (refusals-- > 0 ? done(false, 503) : done(true)),
  });
  server.on('connection', (ws, req) => {
    seen.push({ protocol: ws.protocol, auth: req.headers.authorization });
    ws.on('pong', () => pongs++);
    sockets.push(ws);
    ws.send(JSON.stringify({ event: { type: 'stream.live', after: '0-0' } }));
  });
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const child = spawn(binary, ['127.0.0.1', String(port), '/api/v1/threads/t/stream', 'key-1', '3', '0', join(dir, 'r')], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, FANOUT_CLIENT_PAUSE_US: '0' } });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => String((await lines.next()).value);
  try {
    assert.is(await next(), 'live 3');
    // Socket i offers JSON for even i, MessagePack for odd (first index 0).
    assert.equal(seen.map((s) => s.protocol).sort(), ['svc.json.v1', 'svc.json.v1', 'svc.msgpack.v1']);
    assert.ok(seen.every((s) => s.auth === 'Bearer key-1'));
    const xadd = Date.now() - 5;
    const mark = (): string => `~t=${(performance.timeOrigin + performance.now() - 20).toFixed(3)}~`;
    for (const [i, ws] of sockets.entries()) {
      ws.ping('p');
      // A frame the client must skip, then two deltas (one text, one binary), the second
      // with two marks (a coalesced delta), and a large frame (16-bit length) in between.
      ws.send(JSON.stringify({ id: `${xadd}-0`, event: { type: 'item.started' } }));
      ws.send(`{"id":"${xadd}-1","event":{"type":"item.delta","text":"${mark()} "}}`);
      ws.send(JSON.stringify({ id: `${xadd}-2`, event: { type: 'item.note', pad: 'x'.repeat(1000 + i) } }));
      ws.send(Buffer.from(`{"id":"${xadd}-3","event":{"type":"item.delta","text":"${mark()} ${mark()}"}}`), { binary: true });
    }
    let received = '';
    for (let tries = 0; tries < 100 && received !== 'received 9'; tries++) {
      child.stdin.write('count\n');
      received = await next();
      if (received !== 'received 9') await new Promise((r) => setTimeout(r, 20));
    }
    assert.is(received, 'received 9');
    child.stdin.write('report\n');
    assert.is(await next(), 'reported');
    const doubles = (suffix: string): number[] => {
      const b = readFileSync(join(dir, `r${suffix}`));
      return Array.from(new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8));
    };
    const samples = doubles('.samples');
    assert.is(samples.length, 9);
    assert.ok(samples.every((ms) => ms >= 19 && ms < 5000), `latencies ${samples.join(', ')}`);
    const fromXadd = doubles('.xadd');
    assert.is(fromXadd.length, 6, 'one XADD figure per delta frame');
    assert.ok(fromXadd.every((ms) => ms >= 4 && ms < 5000), `from XADD ${fromXadd.join(', ')}`);
    const deltas = readFileSync(join(dir, 'r.deltas'));
    assert.equal(Array.from(new Int32Array(deltas.buffer, deltas.byteOffset, 3)), [3, 3, 3]);
    assert.is(pongs, 3);
  } finally {
    child.kill('SIGKILL');
    server.close();
    for (const ws of sockets) ws.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
