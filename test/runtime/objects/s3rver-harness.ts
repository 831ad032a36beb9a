import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEST_BUCKET = 'test-bucket';

const STARTUP_TIMEOUT_MS = 5_000;

export interface RunningS3rver {
  endpoint: string;
  /** Stops the server; its port then refuses connections. */
  stop(): Promise<void>;
  /** Stops the server and removes its folder; safe to call after stop(). */
  dispose(): Promise<void>;
}

async function waitForPort(child: ChildProcess): Promise<number> {
  const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
  try {
    const message = await Promise.race([
      once(child, 'message').then(([m]) => m as { port?: unknown }),
      once(child, 'exit').then(([code]) => {
        throw new Error(`s3rver exited during startup (code ${String(code)})`);
      }),
    ]);
    if (typeof message.port !== 'number') throw new Error('s3rver sent no port');
    return message.port;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts s3rver (see s3rver-process.ts) on a free port of 127.0.0.1 over a fresh folder. */
export async function startS3rver(): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'svc-s3rver-'));
  const script = fileURLToPath(new URL('./s3rver-process.js', import.meta.url));
  const child = fork(script, [directory, TEST_BUCKET], {
    execArgv: ['--openssl-legacy-provider'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let port: number;
  try {
    port = await waitForPort(child);
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  const exited = child.exitCode !== null ? Promise.resolve() : once(child, 'exit').then(() => undefined);
  const stop = async (): Promise<void> => {
    if (child.connected) child.disconnect();
    await exited;
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop,
    async dispose() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
