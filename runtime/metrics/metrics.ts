import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process (no module-level singleton). Label sets stay bounded: routes are
 * patterns, never URLs; statuses are numbers; kinds come from fixed lists.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  /** Runs sealed by this process, by final status (completed, failed, cancelled, waiting). */
  readonly runsSealed: Counter<'status'>;
  /** Attempts by how they ended (completed, failed, cancelled, waiting, handoff, lost). */
  readonly attemptsEnded: Counter<'outcome'>;
  /** Attempts started before their run's commit (role all), by what became of them: adopted by their run, or discarded. */
  readonly attemptSpeculations: Counter<'outcome'>;
  /** Attempts this worker is executing now. */
  readonly attemptsActive: Gauge;
  /** Time from claim to the end of an attempt. */
  readonly attemptDuration: Histogram;
  /** Password hashes computed (hash: a new password; verify: a sign-in check). */
  readonly passwordHashes: Counter<'operation'>;
  /**
   * Shared statements (runtime/stores StatementBatcher), by kind (inbox, seal): the items they
   * answered, the statements that answered them (items ÷ statements = the batching), and the
   * shared statements that failed (their items then ran alone).
   */
  readonly batchedItems: Counter<'kind'>;
  readonly batchedStatements: Counter<'kind'>;
  readonly batchedFailures: Counter<'kind'>;
}

export function createMetrics(options: { role: string; defaults?: boolean }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: options.role });
  if (options.defaults !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    runsSealed: new Counter({ name: 'svc_runs_sealed_total', help: 'Runs sealed by this process', labelNames: ['status'], registers: [registry] }),
    attemptsEnded: new Counter({ name: 'svc_attempts_ended_total', help: 'Attempts ended on this worker', labelNames: ['outcome'], registers: [registry] }),
    attemptSpeculations: new Counter({ name: 'svc_attempt_speculations_total', help: 'Attempts started before their run committed, by outcome (adopted, discarded)', labelNames: ['outcome'], registers: [registry] }),
    attemptsActive: new Gauge({ name: 'svc_worker_attempts_active', help: 'Attempts executing on this worker', registers: [registry] }),
    attemptDuration: new Histogram({
      name: 'svc_attempt_duration_seconds',
      help: 'Attempt duration from claim to end',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    passwordHashes: new Counter({ name: 'svc_password_hashes_total', help: 'Password hashes computed (scrypt)', labelNames: ['operation'], registers: [registry] }),
    batchedItems: new Counter({ name: 'svc_statement_batch_items_total', help: 'Inbox inputs and seals answered, by kind (inbox, seal)', labelNames: ['kind'], registers: [registry] }),
    batchedStatements: new Counter({ name: 'svc_statement_batch_statements_total', help: 'Statements that answered them, by kind: items / statements is the batching', labelNames: ['kind'], registers: [registry] }),
    batchedFailures: new Counter({ name: 'svc_statement_batch_failures_total', help: 'Shared statements that failed, by kind (their items then ran alone)', labelNames: ['kind'], registers: [registry] }),
  };
}

/** Serves GET /metrics on its own listener so scraping never competes with the API port. */
export async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry
      .metrics()
      .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text))
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
