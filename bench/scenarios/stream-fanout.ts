// Scenario: live thread stream fan-out. One `all` process (Redis bus) on a fresh database, one
// thread, 1,000 subscribers in this process (half WebSocket — JSON and MessagePack — half SSE),
// and a model that streams tokens for `seconds`. Each token carries the time it was written by
// the model server (this process's clock, like the receipt time), so the latency is model emit
// → service (adapter, attempt, host, XADD, the hub's XREAD, uWS fan-out) → client receipt.
// Bytes buffered for clients are scraped from the service's metrics while the tokens flow.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { summarizeLatency, type BenchContext, type Figures, type Scenario } from '../scenario.js';
import { prepareServiceEnv, serviceMetrics, startServiceProcess } from '../service-harness.js';
import { createThreads, postMessage, seedWorkspace } from '../service-seed.js';

const SUBSCRIBERS = 1000;
const TOKEN_INTERVAL_MS = 20;
const OPEN_CONCURRENCY = 50;
const MARK = /~t=(\d+\.\d+)~/g;
/** This machine's clock in ms with sub-ms precision, comparable across processes (the 10,000-
 *  subscriber scenario receives in child processes). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** The delta latencies one client measured, and how many deltas it received. */
interface Probe {
  samples: number[];
  deltas: number;
  live: boolean;
  close(): void;
}

/** Collects marks from one received event's text (only item.delta events carry a single fresh token). */
function measure(probe: Probe, text: string): void {
  if (!probe.live && text.includes('stream.live')) probe.live = true;
  if (!text.includes('item.delta')) return;
  const now = epochNow();
  for (const match of text.matchAll(MARK)) {
    probe.samples.push(now - Number(match[1]));
    probe.deltas++;
  }
}

function openWs(url: string, apiKey: string, format: 'json' | 'msgpack'): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [format === 'msgpack' ? 'svc.msgpack.v1' : 'svc.json.v1', `bearer.${apiKey}`]);
    const probe: Probe = { samples: [], deltas: 0, live: false, close: () => socket.terminate() };
    // The marks are ASCII inside the frame either way: no decode needed to read them.
    socket.on('message', (data: Buffer) => measure(probe, data.toString('latin1')));
    socket.once('open', () => resolve(probe));
    socket.once('error', reject);
  });
}

function openSse(url: string, apiKey: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        const end = buffer.lastIndexOf('\n\n');
        if (end < 0) return;
        for (const event of buffer.slice(0, end).split('\n\n')) measure(probe, event);
        buffer = buffer.slice(end + 2);
      });
      resolve(probe);
    });
    const probe: Probe = { samples: [], deltas: 0, live: false, close: () => req.destroy() };
    req.on('error', (error) => (probe.live ? undefined : reject(error)));
    req.end();
  });
}

/** An OpenAI-compatible streaming model whose tokens carry their write time (epochNow), one
 *  every `intervalMs` for about a second per request. */
export async function startStampingModel(ctx: BenchContext, intervalMs = TOKEN_INTERVAL_MS): Promise<{ url: string; origin: string; emitted: () => number; finished: () => number }> {
  let emitted = 0;
  let finished = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      const started = performance.now();
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        if (performance.now() - started > 1000) {
          clearInterval(timer);
          finished++;
          return void res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
        }
        emitted++;
        res.write(chunk({ content: `~t=${epochNow().toFixed(3)}~ ` }));
      }, intervalMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ctx.onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  ctx.onCleanup(() => void server.closeAllConnections());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${origin}/v1`, origin, emitted: () => emitted, finished: () => finished };
}

async function openAll(ctx: BenchContext, wsUrl: string, sseUrl: string, apiKey: string): Promise<Probe[]> {
  const probes: Probe[] = [];
  ctx.onCleanup(() => probes.forEach((p) => p.close()));
  for (let i = 0; i < SUBSCRIBERS; i += OPEN_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(OPEN_CONCURRENCY, SUBSCRIBERS - i) }, (_, j) => {
      const n = i + j;
      return n % 2 === 0 ? openSse(sseUrl, apiKey) : openWs(wsUrl, apiKey, n % 4 === 1 ? 'json' : 'msgpack');
    });
    probes.push(...(await Promise.all(batch)));
  }
  const deadline = performance.now() + 30_000;
  while (probes.some((p) => !p.live)) {
    if (ctx.signal.aborted || performance.now() > deadline) throw new Error(`only ${probes.filter((p) => p.live).length} subscribers live`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return probes;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const model = await startStampingModel(ctx);
  const env = await prepareServiceEnv(ctx);
  const metrics = await serviceMetrics();
  const service = await startServiceProcess(ctx, env, 'all', {
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
    ...metrics.env,
  });
  const seed = await seedWorkspace(ctx, env, service.url, model.url);
  const [threadId] = await createThreads(seed, 1);
  const path = `/api/v1/threads/${threadId}/stream`;
  const probes = await openAll(ctx, `${service.url.replace('http://', 'ws://')}${path}`, `${service.url}${path}`, seed.apiKey);
  ctx.log(`${probes.length} subscribers live`);
  let buffered = { total: 0, max: 0, samples: 0 };
  const sampler = setInterval(() => {
    metrics.read().then((value) => (buffered = { total: Math.max(buffered.total, value('svc_stream_buffered_bytes')), max: Math.max(buffered.max, value('svc_stream_buffered_bytes_max')), samples: buffered.samples + 1 }), () => undefined);
  }, 200);
  ctx.onCleanup(() => clearInterval(sampler));
  // Each message starts a ~1 s run; the thread's queue runs them one after another.
  const runs = Math.max(1, Math.round(ctx.seconds));
  const started = performance.now();
  for (let i = 0; i < runs; i++) await postMessage(seed, threadId!, `stream ${i}`);
  const expected = (): number => model.emitted();
  const deadline = started + (runs + 30) * 1000;
  while (performance.now() < deadline && !ctx.signal.aborted) {
    await new Promise((r) => setTimeout(r, 50));
    if (model.finished() >= runs && probes.every((p) => p.deltas >= expected())) break;
  }
  const elapsedSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const all = probes.flatMap((p) => p.samples);
  const latency = summarizeLatency(all);
  const complete = probes.filter((p) => p.deltas === expected()).length;
  return {
    subscribers: probes.length,
    ws_subscribers: probes.length / 2,
    sse_subscribers: probes.length / 2,
    deltas_emitted: expected(),
    deliveries: all.length,
    subscribers_complete: complete,
    delta_p50_ms: latency.p50_ms,
    delta_p99_ms: latency.p99_ms,
    delta_max_ms: latency.max_ms,
    deliveries_per_sec: Math.round(all.length / elapsedSeconds),
    buffered_bytes_peak_total: buffered.total,
    buffered_bytes_peak_max_subscriber: buffered.max,
    buffered_samples: buffered.samples,
  };
}

export const streamFanout: Scenario = {
  name: 'stream-fanout',
  kind: 'scenario',
  budgetSeconds: (s) => 3 * s + 90,
  run,
  // Target (p99 ≤ 50 ms): bench/targets.ts.
};
