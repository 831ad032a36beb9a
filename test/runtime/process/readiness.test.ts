import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, urlFor, type TestDatabase } from '../../support/database.js';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('runtime/process/readiness');
let db: TestDatabase;
let redis: PrivateRedis;
let proxy: TcpProxy;
let service: TestService;

async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!accept(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    last = await probe();
  }
  return last;
}
const ready = async () => {
  const response = await fetch(`${service.url}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

test.before(async () => {
  db = await createTestDatabase('ready');
  redis = await startPrivateRedis();
  proxy = await startTcpProxy('127.0.0.1', 5432);
  // The service reaches PostgreSQL through a proxy the test can cut.
  const viaProxy = new URL(urlFor(db.name));
  viaProxy.port = String(proxy.port);
  service = await startTestService({ databaseUrl: viaProxy.toString(), kvUrl: redis.url, env: { SVC_SERVER__READINESS_TIMEOUT: '1' } });
});
test.after(async () => {
  await service?.stop();
  await proxy?.close();
  await redis?.stop();
  await db?.drop();
});

test('healthz and readyz answer 200 with the role once started', async () => {
  const health = await fetch(`${service.url}/healthz`);
  assert.is(health.status, 200);
  assert.equal(await health.json(), { status: 'ok', role: 'all' });
  assert.equal(await ready(), { status: 200, body: { status: 'ready', role: 'all' } });
});

test('losing Redis keeps readiness 200 with degraded redis; its return clears the marker without a restart', async () => {
  await redis.stop();
  const degraded = await until(ready, (r) => Array.isArray(r.body.degraded));
  assert.is(degraded.status, 200);
  assert.equal(degraded.body, { status: 'ready', role: 'all', degraded: ['redis'] });
  await redis.start();
  const recovered = await until(ready, (r) => r.body.degraded === undefined);
  assert.equal(recovered, { status: 200, body: { status: 'ready', role: 'all' } });
});

test('an unreachable database answers 503 dependency database within readiness_timeout, and recovers', async () => {
  proxy.cut();
  const started = Date.now();
  const down = await until(ready, (r) => r.status === 503);
  assert.is(down.status, 503);
  assert.equal(down.body, { status: 'unavailable', dependency: 'database', role: 'all' });
  assert.ok(Date.now() - started < 5000);
  proxy.restore();
  const back = await until(ready, (r) => r.status === 200);
  assert.is(back.status, 200);
});

test('a background task that stops turns the process not ready (dependency runtime)', async () => {
  service.services.reportTaskFailure('test-task', new Error('boom'));
  assert.equal(await ready(), { status: 503, body: { status: 'unavailable', dependency: 'runtime', role: 'all' } });
  const health = await fetch(`${service.url}/healthz`);
  assert.is(health.status, 200, 'liveness is unaffected');
});

test.run();
