import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { apiStarters } from '../../api/index.js';
import { jobStarters } from '../../jobs/index.js';
import { workerStarters } from '../../actors/index.js';
import { createLogger, loadConfig, startService, type HttpServer, type LoadedConfig, type Role, type RoleStarter, type RunningService } from '../../runtime/index.js';

/** Log records a test can search (one parsed JSON object per line). */
export class LogCapture extends Writable {
  readonly records: Array<Record<string, unknown>> = [];
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      this.lines.push(line);
      try {
        this.records.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not JSON: kept in lines only
      }
    }
    done();
  }
}

export interface TestService extends RunningService {
  url: string;
  logs: LogCapture;
  loaded: LoadedConfig;
  dir: string;
  /** The process's HTTP server: its routes() are what the router serves. */
  server: HttpServer;
}

/**
 * Starts the service in-process the way main.ts composes it, on a free port, against the
 * given database, with a fresh temp dir for objects and the key ring. `env` are SVC_*
 * overrides (strings, as an operator would set them).
 */
export async function startTestService(options: { databaseUrl: string; role?: Role; kvUrl?: string; env?: Record<string, string> }): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const loaded = loadConfig({
    cwd: dir,
    env: {
      SVC_DATABASE__URL: options.databaseUrl,
      SVC_SERVER__PORT: '0',
      SVC_KV__URL: options.kvUrl ?? '',
      SVC_KV__KEY_PREFIX: `svc-test-${Math.random().toString(36).slice(2)}:`,
      SVC_SERVER__SHUTDOWN_GRACE_SECONDS: '2',
      SVC_DATABASE__POOL_SIZE: '5',
      ...options.env,
    },
  });
  const logs = new LogCapture();
  const logger = createLogger({ level: 'info', destination: logs as never });
  let server: HttpServer | undefined;
  // Every role builds one HttpServer and hands it to its starters: the first one keeps it.
  const captureServer: RoleStarter = async (_services, httpServer) => void (server ??= httpServer);
  let running: RunningService;
  try {
    running = await startService(loaded, options.role ?? 'all', { control: [captureServer, ...apiStarters, ...jobStarters], worker: [captureServer, ...workerStarters] }, logger);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...running,
    url: `http://127.0.0.1:${running.port}`,
    logs,
    loaded,
    dir,
    server: server!,
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
