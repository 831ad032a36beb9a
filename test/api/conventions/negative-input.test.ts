import { request as httpRequest } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';

const test = suite('api/conventions/negative-input');
let db: TestDatabase;
let service: TestService;
let admin: Client;

test.before(async () => {
  db = await createTestDatabase('neg');
  service = await startTestService({ databaseUrl: db.url, env: { SVC_SERVER__MAX_BODY_BYTES: '4096' } });
  const seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
});
test.after(async () => {
  await service?.stop();
  await db?.drop();
});

const expect = (r: { status: number; body: any }, status: number, code: string, label: string) => {
  assert.is(r.status, status, `${label}: ${JSON.stringify(r.body)}`);
  assert.is(r.body.error.code, code, label);
};

test('bodies: oversized 413, wrong content type 415, malformed 400, never 500', async () => {
  expect(await admin.post('/api/v1/api-keys', { name: 'x'.repeat(5000) }), 413, 'payload_too_large', 'oversized');
  expect(await admin.post('/api/v1/api-keys', '{"name":"x"}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type', 'text/plain');
  expect(await admin.post('/api/v1/api-keys', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type', 'form');
  expect(await admin.post('/api/v1/api-keys', '{"name":'), 400, 'invalid_argument', 'truncated JSON');
  expect(await admin.post('/api/v1/api-keys', ''), 400, 'invalid_argument', 'empty body');
  expect(await admin.post('/api/v1/api-keys', '[1,2]'), 400, 'invalid_argument', 'array body');
});

test('unsafe JSON: deep nesting, prototype keys, NUL characters, integers beyond 2^53', async () => {
  const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
  expect(await admin.post('/api/v1/api-keys', deep), 400, 'invalid_argument', 'deep');
  expect(await admin.post('/api/v1/api-keys', '{"name":"x","__proto__":{"admin":true}}'), 400, 'invalid_argument', '__proto__');
  expect(await admin.post('/api/v1/api-keys', '{"name":"x","constructor":{"prototype":{}}}'), 400, 'invalid_argument', 'constructor');
  expect(await admin.post('/api/v1/api-keys', '{"name":"a\\u0000b"}'), 400, 'invalid_argument', 'NUL');
  expect(await admin.post('/api/v1/workspaces/x', '{"n":9007199254740993}'), 405, 'method_not_allowed', 'wrong method first');
  const huge = await admin.patch(`/api/v1/workspaces/ws_x`, '{"name":"x","n":9007199254740993}');
  expect(huge, 400, 'invalid_argument', 'huge integer');
  assert.match(huge.body.error.message, /2\^53/);
  const deepReply = await admin.post('/api/v1/api-keys', deep);
  assert.match(deepReply.body.error.message, /deeper than 32/);
});

test('schema violations name the field', async () => {
  const r = await admin.post('/api/v1/api-keys', { name: 'x', role: 'root' });
  expect(r, 400, 'invalid_argument', 'bad enum');
  assert.match(r.body.error.message, /body\.role/);
  const extra = await admin.post('/api/v1/api-keys', { name: 'x', surprise: 1 });
  expect(extra, 400, 'invalid_argument', 'unknown field');
});

test('queries: duplicated or unknown parameters, out-of-range limits and foreign cursors are 400', async () => {
  expect(await admin.get('/api/v1/api-keys?limit=5&limit=6'), 400, 'invalid_argument', 'duplicate');
  expect(await admin.get('/api/v1/api-keys?bogus=1'), 400, 'invalid_argument', 'unknown');
  expect(await admin.get('/api/v1/api-keys?limit=0'), 400, 'invalid_argument', 'limit 0');
  expect(await admin.get('/api/v1/api-keys?limit=101'), 400, 'invalid_argument', 'limit 101');
  expect(await admin.get('/api/v1/api-keys?limit=abc'), 400, 'invalid_argument', 'limit abc');
  expect(await admin.get('/api/v1/api-keys?cursor=not-a-cursor'), 400, 'invalid_argument', 'cursor');
  assert.is((await admin.get('/api/v1/api-keys?limit=2')).status, 200);
});

test('headers and paths: oversized or odd values get 4xx, never 500', async () => {
  const weird = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${service.url}/api/v1/api-keys`, { method: 'GET', headers: { authorization: `Bearer ${'x'.repeat(600)}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  assert.is(weird, 401);
  expect(await admin.get('/api/v1/workspaces/%E0%A4%A'), 400, 'invalid_argument', 'bad escape');
  expect(await admin.get(`/api/v1/workspaces/${'w'.repeat(300)}`), 400, 'invalid_argument', 'long id');
});

test.run();
