import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('runtime/process/metrics');
let db: TestDatabase;
let service: TestService;
let metricsUrl: string;

test.before(async () => {
  db = await createTestDatabase('metrics');
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  service = await startTestService({ databaseUrl: db.url, env: { SVC_METRICS__ENABLED: 'true', SVC_METRICS__PORT: String(port) } });
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('metrics are served in Prometheus text on their own listener, with bounded labels (routes, never URLs)', async () => {
  await fetch(`${service.url}/healthz`);
  await fetch(`${service.url}/api/v1/workspaces/ws_secret_id_123`);
  const response = await fetch(metricsUrl);
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
  const text = await response.text();
  assert.match(text, /svc_http_requests_total\{[^}]*route="\/healthz"[^}]*\} \d+/);
  assert.match(text, /svc_http_request_duration_seconds_bucket/);
  assert.match(text, /svc_outbox_dead/);
  assert.not.ok(text.includes('ws_secret_id_123'), 'path parameters never become labels');
  assert.is((await fetch(metricsUrl.replace('/metrics', '/other'))).status, 404);
});

test.run();
