import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';

/** A private redis-server on a free port, for loss and restart tests. */
export interface PrivateRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function waitUntilUp(port: number): Promise<void> {
  const { Redis } = await import('ioredis');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch {
      client.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`redis-server on ${port} did not start`);
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitUntilUp(port);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}
