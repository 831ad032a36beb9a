import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { runCliProcess } from '../../support/cli.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('runtime/process/worker-role');
let db: TestDatabase;
let worker: TestService;

test.before(async () => {
  db = await createTestDatabase('worker');
  const migrated = await runCliProcess(['migrate'], { env: { SVC_DATABASE__URL: db.url } });
  assert.is(migrated.code, 0, migrated.stderr);
  worker = await startTestService({ databaseUrl: db.url, role: 'worker', kvUrl: 'redis://127.0.0.1:6379' });
});
test.after(async () => {
  await worker?.stop();
  await db?.drop();
});

test('a worker serves only healthz and readyz', async () => {
  assert.equal(await (await fetch(`${worker.url}/healthz`)).json(), { status: 'ok', role: 'worker' });
  assert.is((await fetch(`${worker.url}/readyz`)).status, 200);
  for (const path of ['/api/v1/openapi.json', '/api/v1/agents', '/']) {
    const response = await fetch(`${worker.url}${path}`);
    assert.is(response.status, 404, path);
  }
});

test('a worker never migrates: it refuses an unmigrated database', async () => {
  const fresh = await createTestDatabase('worker_fresh');
  try {
    let error: unknown;
    try {
      const started = await startTestService({ databaseUrl: fresh.url, role: 'worker', kvUrl: 'redis://127.0.0.1:6379' });
      await started.stop();
    } catch (e) {
      error = e;
    }
    assert.instance(error, Error);
    assert.match((error as Error).message, /svc-service migrate/);
  } finally {
    await fresh.drop();
  }
});

test('control and worker roles require kv.url; the in-process bus is for role all only', async () => {
  let error: unknown;
  try {
    await startTestService({ databaseUrl: db.url, role: 'control' });
  } catch (e) {
    error = e;
  }
  assert.match((error as Error).message, /kv\.url is required/);
});

test.run();
