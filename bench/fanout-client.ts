// A child process holding many WebSocket subscribers of one thread stream, for the 10,000-
// subscriber fan-out scenario (scenarios/stream-fanout-ws.ts). Cheap on purpose, so the
// figure measures the service and not the clients: a bare RFC 6455 client on node:net (HTTP
// upgrade, unmasked server frames parsed in place, pongs answered), no per-frame decode — the
// time mark `~t=<epoch ms>~` the model wrote into the token is found as ASCII in the frame
// (JSON and MessagePack frames alike). Latency = receipt − mark, both on this machine's
// clock (performance.timeOrigin + performance.now()).
//
// Protocol with the parent (fork IPC): argv = url, api key, count, first index; the child
// sends {live: n} once every socket has its `stream.live`, answers {count: true} with
// {received: n} (deltas received so far, all sockets), and on {report: true} answers
// {samples: number[], fromXadd: number[], deltas: number[]} (latencies; receipt − the XADD time
// in each delta's stream id, i.e. the fan-out leg alone; deltas received per socket), then exits.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

const [url = '', apiKey = '', countText = '0', firstText = '0'] = process.argv.slice(2);
const count = Number(countText);
const first = Number(firstText);
const OPEN_CONCURRENCY = 10;
const READ_BUFFER = Buffer.alloc(256 * 1024);
/** A refused upgrade (503: the service's pool is busy with the other upgrades) is retried. */
const UPGRADE_RETRIES = 50;
const RETRY_DELAY_MS = 200;
const MARK = '~t=';
const now = (): number => performance.timeOrigin + performance.now();

const samples: number[] = [];
/** Receipt − the time in the record's stream id (Redis's clock at the XADD, whole ms, same machine):
 *  the leg hub read → uWS publish → socket → client, without the model → attempt → XADD leg. */
const fromXadd: number[] = [];
/** The stream id leads every record frame (`{"id":"<ms>-<seq>",…` in JSON, the map's first value in MessagePack). */
const STREAM_ID = /(\d{13})-\d+/;
const deltas = new Int32Array(count);
let live = 0;

const DELTA = Buffer.from('item.delta');
const LIVE = Buffer.from('stream.live');
const MARK_BYTES = Buffer.from(MARK);
const TILDE = 0x7e;

/**
 * Reads the server's frames from one socket; masks nothing (server frames are unmasked). Works
 * on the bytes as read (no per-frame string): the reads land in one buffer shared by every
 * socket of the process (net's `onread`, see open), so whatever is kept past the callback — a
 * partial frame — is copied.
 */
function reader(socket: Socket, index: number, refused: (status: string) => void): (chunk: Buffer) => void {
  let pending: Buffer | null = null;
  let upgraded = false;
  let isLive = false;
  return (chunk) => {
    let buf = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = null;
    if (!upgraded) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return void (pending = Buffer.from(buf));
      const head = buf.toString('latin1', 0, end);
      if (!head.startsWith('HTTP/1.1 101')) {
        socket.destroy();
        return refused(head.split('\r\n')[0] ?? '');
      }
      upgraded = true;
      buf = buf.subarray(end + 4);
    }
    let at = 0;
    let received = 0;
    while (buf.length - at >= 2) {
      const opcode = buf[at]! & 0x0f;
      let length = buf[at + 1]! & 0x7f;
      let offset = at + 2;
      if (length === 126) {
        if (buf.length - at < 4) break;
        length = buf.readUInt16BE(at + 2);
        offset = at + 4;
      } else if (length === 127) {
        if (buf.length - at < 10) break;
        length = Number(buf.readBigUInt64BE(at + 2));
        offset = at + 10;
      }
      const end = offset + length;
      if (buf.length < end) break;
      if (received === 0) received = now();
      if (opcode === 0x9) socket.write(frame(0xa, buf.subarray(offset, end)));
      else if (opcode === 0x1 || opcode === 0x2) {
        const payload = buf.subarray(offset, end);
        if (!isLive && payload.includes(LIVE)) {
          isLive = true;
          live++;
          if (live === count) process.send?.({ live });
        }
        if (payload.includes(DELTA)) {
          const id = STREAM_ID.exec(payload.toString('latin1', 0, Math.min(48, payload.length)));
          if (id) fromXadd.push(received - Number(id[1]));
          for (let m = payload.indexOf(MARK_BYTES); m >= 0; m = payload.indexOf(MARK_BYTES, m + 3)) {
            const close = payload.indexOf(TILDE, m + 3);
            samples.push(received - Number(payload.toString('latin1', m + 3, close)));
            deltas[index]!++;
          }
        }
      }
      at = end;
    }
    if (at < buf.length) pending = Buffer.from(buf.subarray(at));
  };
}

/** A masked client frame (control frames only: pong). */
function frame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const out = Buffer.alloc(6 + payload.length);
  out[0] = 0x80 | opcode;
  out[1] = 0x80 | payload.length;
  mask.copy(out, 2);
  for (let i = 0; i < payload.length; i++) out[6 + i] = payload[i]! ^ mask[i % 4]!;
  return out;
}

/** Resolves once the upgrade is answered 101 (retrying refusals); frames are read from then on. */
function open(index: number, attempt = 0): Promise<void> {
  const target = new URL(url);
  const format = (first + index) % 2 === 0 ? 'svc.json.v1' : 'svc.msgpack.v1';
  return new Promise((resolve, reject) => {
    let refused = false;
    let opened = false;
    // Every read of every socket lands in READ_BUFFER and is parsed at once (no per-read Buffer,
    // no stream 'data' events): the clients cost less next to the service they measure.
    const onread = {
      buffer: READ_BUFFER,
      callback: (bytes: number, buffer: Uint8Array): boolean => {
        parse(Buffer.from(buffer.buffer, buffer.byteOffset, bytes));
        if (!opened && !refused && !socket.destroyed) {
          opened = true;
          resolve();
        }
        return true;
      },
    };
    const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true, onread }, () => {
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Protocol: ${format}\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`,
      );
    });
    const parse = reader(socket, index, (status) => {
      refused = true;
      if (attempt >= UPGRADE_RETRIES) return reject(new Error(`upgrade refused: ${status}`));
      setTimeout(() => open(index, attempt + 1).then(resolve, reject), RETRY_DELAY_MS);
    });
    socket.once('error', (error) => (live < count ? reject(error) : undefined));
  });
}

async function main(): Promise<void> {
  for (let i = 0; i < count; i += OPEN_CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, count - i) }, (_, j) => open(i + j)));
  }
}

process.on('message', (message: { report?: boolean; count?: boolean }) => {
  if (message.count) return void process.send?.({ received: samples.length });
  if (!message.report) return;
  process.send?.({ samples, fromXadd, deltas: Array.from(deltas) }, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
main().catch((error: unknown) => {
  process.send?.({ error: error instanceof Error ? error.message : String(error) });
});
