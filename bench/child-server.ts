// Starts a Node child process that serves on a free 127.0.0.1 port and announces it with one
// stdout line `{"port": N}`. Load generators run in the harness process and servers in a child
// so that each gets its own core (autocannon alone saturates one core on this 2-core machine).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { BenchContext } from './scenario.js';

export interface ChildServer {
  readonly port: number;
  readonly pid: number;
}

const READY_TIMEOUT_MS = 10_000;
const KILL_GRACE_MS = 2_000;

export async function startChildServer(
  ctx: Pick<BenchContext, 'onCleanup'>,
  file: string,
  args: readonly string[],
): Promise<ChildServer> {
  // stdin stays a pipe: the child exits when it closes, so a SIGKILLed harness leaves no orphan.
  const child = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  ctx.onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    await exited;
    clearTimeout(timer);
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${file}: no port announced in ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${file} exited early (${code ?? signal})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n')[0];
      if (line === undefined || !buffered.includes('\n')) return;
      clearTimeout(timer);
      try {
        const parsed = JSON.parse(line) as { port?: unknown }; // I/O edge: the child's announcement
        if (typeof parsed.port !== 'number') throw new Error(`bad announcement: ${line}`);
        resolve(parsed.port);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
  return { port, pid: child.pid ?? -1 };
}
