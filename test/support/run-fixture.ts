import { startModelServer, type ModelScript, type ModelScriptFn, type ModelServer, type RecordedRequest } from '../../bench/model-server.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { apiKeyClient, login, seedOrganization, type Client } from './identity.js';
import { startTestService, type TestService } from './service.js';

/**
 * A running service with a model provider pointing at the local OpenAI-compatible model
 * server, a model `fast`, an agent using it, and a session with a thread: the starting point of
 * every run-engine test.
 */
export interface RunFixture {
  db: TestDatabase;
  service: TestService;
  model: ModelServer;
  /** The administrator's login session (to create more workspaces). */
  session: Client;
  client: Client;
  agentId: string;
  sessionId: string;
  threadId: string;
  stop(): Promise<void>;
}

export async function startRunFixture(options: {
  script?: ModelScript[] | ModelScriptFn;
  agentConfig?: Record<string, unknown>;
  env?: Record<string, string>;
  kvUrl?: string;
  role?: 'all' | 'control';
  databaseUrl?: string;
  tokenDelayMs?: number;
  /** Plain-http origins allowed besides the model server's (local vendor servers, web pages). */
  allowedHttpOrigins?: string[];
} = {}): Promise<RunFixture> {
  const model = await startModelServer({ tokens_per_response: 5, token_delay_ms: options.tokenDelayMs ?? 0, ...(options.script ? { script: options.script } : {}) });
  const db = options.databaseUrl ? { name: '', url: options.databaseUrl, drop: async () => undefined } : await createTestDatabase('run');
  const service = await startTestService({
    databaseUrl: db.url,
    ...(options.kvUrl ? { kvUrl: options.kvUrl } : {}),
    ...(options.role ? { role: options.role } : {}),
    env: { SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin, ...(options.allowedHttpOrigins ?? [])]), SVC_WORKER__POLL_SECONDS: '1', SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0', ...options.env },
  });
  const seeded = await seedOrganization(db.url);
  const session = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  const client = (await apiKeyClient(session)).client;
  const provider = await client.post('/api/v1/model-providers', { type: 'openai', name: 'local', config: { base_url: model.url }, credential: { api_key: 'test-key' } });
  if (provider.status !== 201) throw new Error(`provider: ${provider.status} ${JSON.stringify(provider.body)}`);
  const created = await client.post('/api/v1/models', { key: 'fast', provider_id: provider.body.id, model: 'mock-model', api: 'openai-chat' });
  if (created.status !== 201) throw new Error(`model: ${created.status} ${JSON.stringify(created.body)}`);
  const agent = await client.post('/api/v1/agents', { name: 'tester', config: { model: 'fast', instructions: 'Be brief.', ...options.agentConfig } });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  const sessionView = await client.post('/api/v1/sessions', {});
  const thread = await client.post(`/api/v1/sessions/${sessionView.body.id}/threads`, {});
  return {
    db,
    service,
    model,
    session,
    client,
    agentId: agent.body.id,
    sessionId: sessionView.body.id,
    threadId: thread.body.id,
    stop: async () => {
      await service.stop();
      await model.close();
      await db.drop();
    },
  };
}

/**
 * A model script chosen by key: the newest user message that contains one of the keys decides,
 * and that key's queue answers (one response per request, in order). Tests give each run its
 * own key so runs on one model server never take each other's responses.
 */
export function keyedScript(scripts: Map<string, ModelScript[]>): ModelScriptFn {
  return (request) => {
    const users = ((request.body?.messages ?? []) as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').reverse();
    for (const message of users) {
      const queue = [...scripts.entries()].find(([k]) => JSON.stringify(message.content).includes(k))?.[1];
      if (queue) return queue.shift();
    }
    return undefined;
  };
}

/** A new thread in the fixture's session (201 or the test fails). */
export async function newThread(fixture: RunFixture): Promise<string> {
  const thread = await fixture.client.post(`/api/v1/sessions/${fixture.sessionId}/threads`, {});
  if (thread.status !== 201) throw new Error(`thread: ${thread.status} ${JSON.stringify(thread.body)}`);
  return thread.body.id as string;
}

let keyCounter = 0;

/** POST /threads/{id}/inbox with a fresh Idempotency-Key. */
export function send(fixture: RunFixture, text: string, extra: Record<string, unknown> = {}, threadId = fixture.threadId) {
  return fixture.client.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: fixture.agentId, payload: { content: [{ type: 'text', text }] }, ...extra }, { 'idempotency-key': `k-${process.pid}-${++keyCounter}-${Date.now()}` });
}

/** Polls a run until its status is one of `statuses` (never a fixed sleep). */
export async function waitForRun(fixture: RunFixture, runId: string, statuses: string[] = ['completed', 'failed', 'cancelled', 'waiting'], timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await fixture.client.get(`/api/v1/runs/${runId}`);
    if (statuses.includes(run.body?.status)) return run.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.body?.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function until<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)?.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The model requests of the fixture whose messages mention `text` anywhere (history included). */
export function requestsMentioning(fixture: RunFixture, text: string): RecordedRequest[] {
  return fixture.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(text));
}

/** svc_attempt_speculations_total by outcome, from the metrics listener on `metricsPort`. */
export async function speculationCounts(metricsPort: number): Promise<{ adopted: number; discarded: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const count = (outcome: string) => Number(new RegExp(`svc_attempt_speculations_total\\{outcome="${outcome}"[^}]*\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { adopted: count('adopted'), discarded: count('discarded') };
}
