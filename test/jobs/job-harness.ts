import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeJobContext, createJobContext, type JobContext } from '../../jobs/index.js';
import { createLogger, loadConfig, openServices, prepareSchema, type EngineHooks, type Services } from '../../runtime/index.js';
import { LogCapture } from '../support/service.js';

/** Services and a job context on a test database, without HTTP or pg-boss: tests call passes. */
export interface JobHarness {
  services: Services;
  context: JobContext;
  logs: LogCapture;
  close(): Promise<void>;
}

export async function openJobHarness(databaseUrl: string, env: Record<string, string> = {}, engine?: EngineHooks): Promise<JobHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
  const loaded = loadConfig({ cwd: dir, env: { SVC_DATABASE__URL: databaseUrl, SVC_KV__URL: '', SVC_DATABASE__POOL_SIZE: '4', ...env } });
  const logs = new LogCapture();
  const logger = createLogger({ level: 'debug', destination: logs as never });
  const services = await openServices(loaded, 'all', logger);
  await prepareSchema(services.pool, { role: 'all', autoMigrate: true, lockTimeoutSeconds: 30, logger, migrations: services.migrations });
  const context = createJobContext(services, engine ? { engine } : {});
  return {
    services,
    context,
    logs,
    async close() {
      closeJobContext(context);
      await services.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver; `reply` decides each answer (status, headers, body, delay). */
export class Receiver {
  readonly hits: Hit[] = [];
  reply: (hit: Hit, index: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } = () => ({ status: 200 });
  private server: Server | null = null;
  port = 0;

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hit = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.hits.push(hit);
        const answer = this.reply(hit, this.hits.length - 1);
        const send = () => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The value of one labelled sample in the registry's text output. */
export async function metricValue(services: Services, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await services.metrics.registry.metrics();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** A subscription straight into the store (API tests go through POST /subscriptions). */
export async function addSubscription(services: Services, workspaceId: string, url: string, events: string[] = ['run.completed']): Promise<{ id: string; secret: string }> {
  const { ID_PREFIX, insertSubscription, newId, newWebhookSecret, webhookSecretAad } = await import('../../runtime/index.js');
  const id = newId(ID_PREFIX.subscription);
  const secret = newWebhookSecret();
  await insertSubscription(services.pool, { id, workspace_id: workspaceId, url, events, description: '', secret_ciphertext: services.keyring.encrypt(secret, webhookSecretAad(workspaceId, id)), created_by_id: null });
  return { id, secret };
}
