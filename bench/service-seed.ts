// Seeds a freshly migrated service the way an operator and an API client would: `bootstrap`
// (the bin) creates the organization, workspace and admin; then over HTTP: login → API key →
// model provider pointing at the local model server → model → agent → session → threads.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { assertLoopback, type BenchContext } from './scenario.js';
import { runBin, type ServiceEnv } from './service-harness.js';

const REQUEST_TIMEOUT_MS = 10_000;
/** Connections kept open between requests (no limit on how many: each scenario bounds its clients). */
const keepAlive = new http.Agent({ keepAlive: true });

export interface ApiResponse {
  readonly status: number;
  readonly body: any; // any: JSON from the service at the I/O edge; callers read known fields
}

/** A minimal JSON client for the service's API (setup and purpose-built clients). */
export class Api {
  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {
    assertLoopback(base);
  }

  with(headers: Record<string, string>): Api {
    return new Api(this.base, { ...this.headers, ...headers });
  }

  /**
   * One request over node:http with a keep-alive agent (a client that reuses its connection, as
   * a UI's does). Not the global fetch: undici's request and web-stream machinery cost the
   * harness ~2× the CPU per request, and the harness shares the machine's cores with the
   * service it measures.
   */
  call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const url = new URL(`${this.base}${path}`);
    return new Promise<ApiResponse>((resolve, reject) => {
      const request = http.request(
        {
          method,
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          agent: keepAlive,
          timeout: REQUEST_TIMEOUT_MS,
          headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }), ...this.headers, ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: response.statusCode ?? 0, body: text === '' ? null : (JSON.parse(text) as unknown) });
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** POST that must answer `expected`; otherwise throws with the body. */
  async create(path: string, body: unknown, expected = 201, headers: Record<string, string> = {}): Promise<any> {
    const r = await this.call('POST', path, body, headers);
    if (r.status !== expected) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
    return r.body;
  }
}

export interface SeededWorkspace {
  readonly workspaceId: string;
  /** `svk_…`: what autocannon puts in `Authorization: Bearer`. */
  readonly apiKey: string;
  /** Client authenticated with the API key. */
  readonly api: Api;
  readonly agentId: string;
  readonly sessionId: string;
}

/** Bootstraps identity, then configures a provider, model `fast` and agent on the model server. */
export async function seedWorkspace(ctx: BenchContext, env: ServiceEnv, baseUrl: string, modelUrl: string): Promise<SeededWorkspace> {
  const email = 'bench@example.com';
  const password = `bench-${randomBytes(12).toString('hex')}`;
  const boot = await runBin(ctx, env, ['bootstrap', '--email', email, '--password-stdin'], {}, `${password}\n`);
  if (boot.code !== 0) throw new Error(`bootstrap exited ${boot.code}: ${boot.output}`);
  const ids = JSON.parse(boot.output.trim().split('\n').pop() ?? '{}') as { workspace_id?: string };
  if (!ids.workspace_id) throw new Error(`bootstrap printed no workspace: ${boot.output}`);
  const login = (await new Api(baseUrl).create('/api/v1/auth/login', { email, password })) as { token: string };
  const session = new Api(baseUrl, { authorization: `Bearer ${login.token}`, 'x-workspace-id': ids.workspace_id });
  const key = (await session.create('/api/v1/api-keys', { name: 'bench' })) as { secret: string };
  const api = new Api(baseUrl, { authorization: `Bearer ${key.secret}` });
  const provider = await api.create('/api/v1/model-providers', { type: 'openai', name: 'local', config: { base_url: modelUrl }, credential: { api_key: 'bench-key' } });
  await api.create('/api/v1/models', { key: 'fast', provider_id: provider.id, model: 'mock-model', api: 'openai-chat' });
  const agent = await api.create('/api/v1/agents', { name: 'bench', config: { model: 'fast', instructions: 'Be brief.' } });
  const sessionView = await api.create('/api/v1/sessions', {});
  return { workspaceId: ids.workspace_id, apiKey: key.secret, api, agentId: agent.id, sessionId: sessionView.id };
}

/** Creates `count` threads in the seeded session, a few requests at a time. */
export async function createThreads(seed: SeededWorkspace, count: number): Promise<string[]> {
  const ids: string[] = [];
  const lane = async (): Promise<void> => {
    while (ids.length < count) {
      ids.push('pending');
      const at = ids.length - 1;
      ids[at] = (await seed.api.create(`/api/v1/sessions/${seed.sessionId}/threads`, {})).id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, count) }, lane));
  return ids;
}

/** The inbox body of a plain text message to the seeded agent. */
export function inboxBody(seed: SeededWorkspace, text: string): Record<string, unknown> {
  return { agent_id: seed.agentId, payload: { content: [{ type: 'text', text }] } };
}

let keySeq = 0;

/** POST /threads/{id}/inbox with a fresh Idempotency-Key; returns the created run id. */
export async function postMessage(seed: SeededWorkspace, threadId: string, text: string): Promise<{ runId: string | null; entryId: string }> {
  const key = `bench-${process.pid}-${++keySeq}-${randomBytes(4).toString('hex')}`;
  const body = await seed.api.create(`/api/v1/threads/${threadId}/inbox`, inboxBody(seed, text), 201, { 'idempotency-key': key });
  return { runId: body.run?.id ?? null, entryId: body.entry.id };
}
