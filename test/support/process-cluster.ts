import * as assert from 'uvu/assert';
import type { ModelServer } from '../../bench/model-server.js';
import { runCliProcess } from './cli.js';
import type { TestDatabase } from './database.js';
import { apiKeyClient, login, seedOrganization, type Client } from './identity.js';
import { spawnService, type ServiceProcess } from './processes.js';

// A control process (API and sweeps) on a migrated test database and the machine's Redis, with
// an organization, an API-key client, an openai model `fast` served by the test's model server,
// one agent and one session: the common start of the tests that run real worker processes
// beside it and kill them.

export interface ProcessCluster {
  /** The environment every process of the cluster starts with (workers too). */
  env: Record<string, string>;
  control: ServiceProcess;
  client: Client;
  agentId: string;
  sessionId: string;
}

export async function startProcessCluster(
  db: TestDatabase,
  model: ModelServer,
  options: { prefix: string; env?: Record<string, string>; agent: { name: string; config?: Record<string, unknown> } },
): Promise<ProcessCluster> {
  const env = {
    SVC_DATABASE__URL: db.url,
    SVC_KV__URL: 'redis://127.0.0.1:6379',
    SVC_KV__KEY_PREFIX: `${options.prefix}-${db.name}:`,
    SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin]),
    SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0',
    ...options.env,
  };
  const migrated = await runCliProcess(['migrate'], { env: { SVC_DATABASE__URL: db.url } });
  assert.is(migrated.code, 0, migrated.stderr);
  const control = await spawnService('control', env);
  const seeded = await seedOrganization(db.url);
  const { client } = await apiKeyClient(await login(`http://127.0.0.1:${control.port}`, seeded.admin.email, seeded.admin.password, seeded.workspace_id));
  const provider = await client.post('/api/v1/model-providers', { type: 'openai', name: 'local', config: { base_url: model.url }, credential: { api_key: 'k' } });
  assert.is(provider.status, 201, JSON.stringify(provider.body));
  await client.post('/api/v1/models', { key: 'fast', provider_id: provider.body.id, model: 'mock-model', api: 'openai-chat' });
  const agent = await client.post('/api/v1/agents', { name: options.agent.name, config: { model: 'fast', ...options.agent.config } });
  assert.is(agent.status, 201, JSON.stringify(agent.body));
  const sessionId = (await client.post('/api/v1/sessions', {})).body.id as string;
  return { env, control, client, agentId: agent.body.id as string, sessionId };
}
