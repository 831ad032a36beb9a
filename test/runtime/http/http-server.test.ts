import { request as httpRequest } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError, HttpServer, createLogger } from '../../../runtime/index.js';
import { LogCapture } from '../../support/service.js';

const test = suite('runtime/http/http-server');
const logs = new LogCapture();
let server: HttpServer;
let base: string;

test.before(async () => {
  server = new HttpServer({ host: '127.0.0.1', port: 0, logger: createLogger({ level: 'info', destination: logs as never }) });
  server.route({ method: 'GET', pattern: '/things/:thing_id', handler: (r) => ({ status: 200, body: { id: r.params.thing_id } }) });
  server.route({ method: 'DELETE', pattern: '/things/:thing_id', handler: () => ({ status: 200, body: {} }) });
  server.route({ method: 'POST', pattern: '/echo', body: { maxBytes: 100 }, handler: (r) => ({ status: 201, body: { size: r.body!.length } }) });
  server.route({ method: 'GET', pattern: '/boom', handler: () => { throw new Error('secret internals'); } });
  server.route({ method: 'GET', pattern: '/limited', handler: () => { throw new AppError('rate_limited', 'slow down', { headers: { 'retry-after': '7' } }); } });
  base = `http://127.0.0.1:${await server.listen()}`;
});
test.after(async () => {
  await server.close(100);
});

test('every response carries X-Request-Id, including errors, and error bodies repeat it', async () => {
  for (const [method, path, status] of [['GET', '/things/a', 200], ['GET', '/nope', 404], ['PUT', '/things/a', 405], ['GET', '/boom', 500], ['GET', '/limited', 429]] as const) {
    const response = await fetch(`${base}${path}`, { method });
    assert.is(response.status, status, `${method} ${path}`);
    const id = response.headers.get('x-request-id');
    assert.ok(id && id.length >= 8, `${method} ${path} has a request id`);
    if (status >= 400) {
      const body = (await response.json()) as { error: { request_id: string; code: string; message: string } };
      assert.is(body.error.request_id, id);
      assert.type(body.error.code, 'string');
    }
  }
});

test('a well-formed client request id is kept; a malformed one is replaced', async () => {
  const kept = await fetch(`${base}/things/a`, { headers: { 'x-request-id': 'client-abc-12345' } });
  assert.is(kept.headers.get('x-request-id'), 'client-abc-12345');
  const replaced = await fetch(`${base}/things/a`, { headers: { 'x-request-id': 'bad id with spaces' } });
  assert.is.not(replaced.headers.get('x-request-id'), 'bad id with spaces');
  assert.match(replaced.headers.get('x-request-id')!, /^req_/);
});

test('a wrong method on a known path is 405 with Allow; an unknown path is 404 not_found', async () => {
  const wrong = await fetch(`${base}/things/a`, { method: 'POST' });
  assert.is(wrong.status, 405);
  assert.is(wrong.headers.get('allow'), 'DELETE, GET');
  assert.is(((await wrong.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  const missing = await fetch(`${base}/elsewhere`);
  assert.is(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');
});

test('an unexpected error is a 500 internal without details or stack', async () => {
  const response = await fetch(`${base}/boom`);
  const text = await response.text();
  assert.not.ok(text.includes('secret internals'));
  assert.is((JSON.parse(text) as { error: { code: string } }).error.code, 'internal');
});

test('AppError headers are sent (Retry-After on rate_limited)', async () => {
  const response = await fetch(`${base}/limited`);
  assert.is(response.headers.get('retry-after'), '7');
});

test('bodies over the limit are 413, whether declared by Content-Length or streamed', async () => {
  const declared = await fetch(`${base}/echo`, { method: 'POST', body: 'x'.repeat(500), headers: { 'content-type': 'application/json' } });
  assert.is(declared.status, 413);
  assert.is(((await declared.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  const streamed = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(`${base}/echo`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (let i = 0; i < 10; i++) req.write('y'.repeat(50));
    req.end();
  });
  assert.is(streamed, 413);
  const ok = await fetch(`${base}/echo`, { method: 'POST', body: '{"a":1}' });
  assert.is(ok.status, 201);
  assert.equal(await ok.json(), { size: 7 });
});

test('malformed percent-encoding in a path parameter is 400, never 500', async () => {
  const response = await fetch(`${base}/things/%E0%A4%A`);
  assert.is(response.status, 400);
});

test('request log records carry the request id and route, never the URL or query string', async () => {
  await fetch(`${base}/things/zzz?token=supersecret`, { headers: { 'x-request-id': 'log-check-0001' } });
  await new Promise((r) => setTimeout(r, 50));
  const record = logs.records.find((r) => r.request_id === 'log-check-0001');
  assert.ok(record, 'request logged');
  assert.is(record!.route, '/things/:thing_id');
  assert.is(record!.status, 200);
  assert.not.ok(logs.lines.join('\n').includes('supersecret'));
  assert.not.ok(logs.lines.join('\n').includes('/things/zzz'));
});

test.run();
