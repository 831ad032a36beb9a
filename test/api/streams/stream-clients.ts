import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';

/** One event as a test sees it, whatever the transport: its stream id (null on control events), type and body. */
export interface SeenEvent {
  id: string | null;
  type: string;
  data: any; // any: the event JSON at the I/O edge; tests read its fields
}

async function waitUntil<T>(probe: () => T | undefined, describe: () => string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

abstract class StreamClient {
  readonly events: SeenEvent[] = [];
  ended = false;

  /** Events with a stream id (records of the thread's stream), in arrival order. */
  records(): SeenEvent[] {
    return this.events.filter((e) => e.id !== null);
  }

  waitFor(predicate: (e: SeenEvent) => boolean, timeoutMs = 20_000): Promise<SeenEvent> {
    return waitUntil(() => this.events.find(predicate), () => `no matching event among ${this.events.length}: ${JSON.stringify(this.events.slice(-3))}`, timeoutMs);
  }

  waitEnded(timeoutMs = 20_000): Promise<true> {
    return waitUntil(() => (this.ended ? true : undefined), () => 'stream still open', timeoutMs);
  }

  abstract close(): void;
}

/** An EventSource-style SSE reader over node:http (it can send Authorization, unlike EventSource). */
export class SseClient extends StreamClient {
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** The first 64 KiB of the body, as received. */
  body = '';
  retry: number | null = null;
  private req: ClientRequest | null = null;

  static open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const client = new SseClient();
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          if (client.body.length < 65_536) client.body += chunk;
          buffer += chunk;
          let at: number;
          while ((at = buffer.indexOf('\n\n')) >= 0) {
            client.parse(buffer.slice(0, at));
            buffer = buffer.slice(at + 2);
          }
        });
        res.on('close', () => (client.ended = true));
        resolve(client);
      });
      req.on('error', (error) => (client.status ? (client.ended = true) : reject(error)));
      req.end();
      client.req = req;
    });
  }

  private parse(block: string): void {
    let id: string | null = null;
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry') this.retry = Number(value);
    }
    if (data.length === 0) return;
    this.events.push({ id, type, data: JSON.parse(data.join('\n')) });
  }

  close(): void {
    this.req?.destroy();
  }
}

/** A WebSocket reader (the `ws` package), JSON or MessagePack frames. */
export class WsClient extends StreamClient {
  closeCode: number | null = null;
  closeReason = '';
  protocol = '';
  binaryFrames = 0;

  constructor(private readonly socket: WebSocket) {
    super();
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.binaryFrames++;
      const frame = (isBinary ? unpack(data) : JSON.parse(data.toString('utf8'))) as { id?: string; event: { type: string } };
      this.events.push({ id: frame.id ?? null, type: frame.event.type, data: frame.event });
    });
    socket.on('close', (code: number, reason: Buffer) => {
      this.closeCode = code;
      this.closeReason = reason.toString('utf8');
      this.ended = true;
    });
  }

  /** Resolves once open, or rejects with the HTTP status the upgrade was refused with. */
  static open(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
      const client = new WsClient(socket);
      socket.once('open', () => {
        client.protocol = socket.protocol;
        resolve(client);
      });
      socket.once('unexpected-response', (_req, res: IncomingMessage) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body })));
      });
      socket.once('error', (error) => reject(error));
    });
  }

  close(): void {
    this.socket.terminate();
  }
}
