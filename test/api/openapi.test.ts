import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiRoutes } from '../../api/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestService, type TestService } from '../support/service.js';

type Json = Record<string, any>; // the parsed document: an I/O edge, walked dynamically

const test = suite('api/openapi');
let db: TestDatabase;
let service: TestService;
let doc: Json;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const toOpenApiPath = (uwsPattern: string) => uwsPattern.replace(/:([a-z0-9_]+)/g, '{$1}');

/** Resolves a local JSON pointer (`#/components/...`); undefined when it leads nowhere. */
function resolve(ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}
const deref = (node: Json): Json => (typeof node.$ref === 'string' ? (resolve(node.$ref) as Json) : node);

function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((m) => (item as Json)[m]).map((method) => ({ path, method, op: (item as Json)[method] as Json })),
  );
}

test.before(async () => {
  db = await createTestDatabase('openapi');
  service = await startTestService({ databaseUrl: db.url });
  const response = await fetch(`${service.url}/api/v1/openapi.json`);
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(response.headers.get('x-request-id'));
  doc = (await response.json()) as Json;
});

test.after(async () => {
  await service?.stop();
  await db?.drop();
});

test('the served document validates as OpenAPI 3.1 and every $ref resolves', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  assert.equal(result.errors, undefined);
  assert.ok(result.valid);
  assert.is(validator.version, '3.1');
  assert.is(doc.openapi, '3.1.0');
  assert.type(doc.info.version, 'string');
  // The validator is a real one: the same document without info is refused.
  const broken = structuredClone(doc);
  delete broken.info;
  assert.not.ok((await new Validator().validate(broken)).valid);

  const dangling: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && resolve(value) === undefined) dangling.push(value);
      // TypeBox's $id is hoisted into components, never left inline.
      if (key === '$id') dangling.push(`$id ${String(value)}`);
      walk(value);
    }
  };
  walk(doc);
  assert.equal(dangling, []);
});

test('lists every pattern and method the router serves, and nothing else', () => {
  const served = service.server.routes().flatMap((r) => r.methods.map((m) => `${m} ${toOpenApiPath(r.pattern)}`)).sort();
  const documented = operations().map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
  assert.ok(served.includes('GET /healthz') && served.includes('GET /readyz') && served.includes('GET /api/v1/docs'));
  assert.equal(documented, served);
});

test('the document is built once per process: later requests serve the same bytes', async () => {
  const [a, b] = await Promise.all([1, 2].map(() => fetch(`${service.url}/api/v1/openapi.json`).then((r) => r.text())));
  assert.is(a, b);
  assert.is(a, JSON.stringify(doc));
});

test('each operation has a unique operationId, summary, tags, the right security and Error-shaped errors', () => {
  const routes = new Map(apiRoutes().map((r) => [`${r.method.toLowerCase()} ${r.path}`, r]));
  const ids = new Set<string>();
  for (const { path, method, op } of operations()) {
    const where = `${method} ${path}`;
    assert.type(op.operationId, 'string', where);
    assert.not.ok(ids.has(op.operationId), `${where}: operationId ${op.operationId} is unique`);
    ids.add(op.operationId);
    assert.ok(op.summary, `${where} has a summary`);
    assert.ok(Array.isArray(op.tags) && op.tags.length === 1, `${where} has a tag`);
    const route = routes.get(where);
    if (!route) {
      assert.ok(['/healthz', '/readyz'].includes(path), `${where} comes from the route table or is a health route`);
      assert.equal(op.security, []);
      continue;
    }
    assert.equal(op.security, route.auth === 'none' ? [] : [{ bearer: [] }], `${where} security`);
    const statuses = Object.keys(op.responses).map(Number);
    for (const status of Object.keys(route.responses).map(Number)) assert.ok(statuses.includes(status), `${where} documents its declared ${status}`);
    assert.ok(statuses.includes(500), `${where} documents 500`);
    for (const status of statuses.filter((s) => s >= 400)) {
      const response = deref(op.responses[status]);
      assert.is(response.content?.['application/json']?.schema?.$ref, '#/components/schemas/Error', `${where} ${status} uses the Error schema`);
      assert.ok(response.headers?.['X-Request-Id'], `${where} ${status} carries X-Request-Id`);
    }
    for (const status of statuses.filter((s) => s < 400)) assert.ok(op.responses[status].headers?.['X-Request-Id'], `${where} ${status} carries X-Request-Id`);
    const params = (op.parameters as Json[]).map(deref);
    const header = (name: string) => params.find((p) => p.in === 'header' && p.name === name);
    if (route.auth !== 'none') {
      for (const s of [401, 403, 429, 503]) assert.ok(statuses.includes(s), `${where} documents ${s}`);
      assert.is(deref(op.responses[401]).headers?.['WWW-Authenticate']?.$ref, '#/components/headers/WWW-Authenticate');
      assert.is(deref(op.responses[429]).headers?.['Retry-After']?.$ref, '#/components/headers/Retry-After');
      assert.is(deref(op.responses[503]).headers?.['Retry-After']?.$ref, '#/components/headers/Retry-After');
    }
    assert.is(Boolean(header('X-Workspace-ID')), route.auth !== 'none' && route.workspace !== 'none', `${where} X-Workspace-ID`);
    if (route.ifMatch) {
      for (const s of [412, 428]) assert.ok(statuses.includes(s), `${where} documents ${s}`);
      assert.is(header('If-Match')?.required, true);
    }
    if (route.idempotency) {
      for (const s of [409, 422]) assert.ok(statuses.includes(s), `${where} documents ${s}`);
      const key = header('Idempotency-Key');
      assert.is(key?.required, route.idempotency === 'required');
      assert.equal(key?.schema, { type: 'string', minLength: 1, maxLength: 512, pattern: '^[!-~]+$' });
    }
    if (route.body) {
      for (const s of [413, 415]) assert.ok(statuses.includes(s), `${where} documents ${s}`);
      assert.ok(op.requestBody.content['application/json'].schema, `${where} has a JSON body schema`);
    }
    for (const name of (route.path.match(/\{([^}]+)\}/g) ?? []).map((s) => s.slice(1, -1))) {
      assert.ok(params.find((p) => p.in === 'path' && p.name === name && p.required === true), `${where} declares path parameter ${name}`);
    }
    for (const name of Object.keys(route.query?.properties ?? {})) assert.ok(params.find((p) => p.in === 'query' && p.name === name), `${where} declares query ${name}`);
  }
});

test('named TypeBox schemas are components referenced by $ref; bodies keep their constraints', () => {
  for (const name of ['Error', 'Workspace', 'ApiKey', 'User', 'Health', 'Readiness']) assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
  assert.equal(Object.keys(doc.components.schemas.Error.properties), ['error']);
  const create = doc.paths['/api/v1/api-keys'].post;
  assert.is(create.operationId, 'createApiKey');
  assert.is(create.responses[201].content['application/json'].schema.properties.api_key.$ref, '#/components/schemas/ApiKey');
  const body = create.requestBody.content['application/json'].schema;
  assert.is(body.additionalProperties, false);
  assert.equal(body.required, ['name']);
  assert.equal(body.properties.name, { minLength: 1, maxLength: 200, type: 'string' });
  const list = doc.paths['/api/v1/api-keys'].get;
  const limit = (list.parameters as Json[]).find((p) => p.name === 'limit');
  assert.equal({ in: limit?.in, required: limit?.required, maximum: limit?.schema.maximum }, { in: 'query', required: false, maximum: 100 });
});

test('ETag is documented on versioned views; the bearer scheme describes both credentials', () => {
  const workspace = doc.paths['/api/v1/workspaces/{workspace_id}'];
  assert.ok(workspace.get.responses[200].headers.ETag);
  assert.ok(workspace.patch.responses[200].headers.ETag);
  assert.not.ok(doc.paths['/api/v1/api-keys'].get.responses[200].headers.ETag);
  const bearer = doc.components.securitySchemes.bearer;
  assert.equal({ type: bearer.type, scheme: bearer.scheme }, { type: 'http', scheme: 'bearer' });
  assert.match(bearer.description, /svk_/);
  assert.match(bearer.description, /svs_/);
});

test('the documented shapes match what the server answers (health, and a real 401)', async () => {
  const health = (await (await fetch(`${service.url}/healthz`)).json()) as Json;
  const healthSchema = doc.components.schemas.Health;
  assert.equal(Object.keys(health).sort(), Object.keys(healthSchema.properties).sort());
  const ready = (await (await fetch(`${service.url}/readyz`)).json()) as Json;
  for (const key of Object.keys(ready)) assert.ok(key in doc.components.schemas.Readiness.properties, `readyz field ${key} is documented`);
  const denied = await fetch(`${service.url}/api/v1/api-keys`);
  assert.is(denied.status, 401);
  assert.is(denied.headers.get('www-authenticate'), 'Bearer');
  const error = (await denied.json()) as Json;
  assert.equal(Object.keys(error.error).sort(), ['code', 'message', 'request_id']);
  for (const key of Object.keys(error.error)) assert.ok(key in doc.components.schemas.Error.properties.error.properties);
});

test('a control process serves the document too; a worker process does not', async () => {
  const control = await startTestService({ databaseUrl: db.url, role: 'control', kvUrl: 'redis://127.0.0.1:6379' });
  try {
    const response = await fetch(`${control.url}/api/v1/openapi.json`);
    assert.is(response.status, 200);
    assert.is(((await response.json()) as Json).openapi, '3.1.0');
  } finally {
    await control.stop();
  }
  const worker = await startTestService({ databaseUrl: db.url, role: 'worker', kvUrl: 'redis://127.0.0.1:6379' });
  try {
    assert.is((await fetch(`${worker.url}/api/v1/openapi.json`)).status, 404);
    assert.is((await fetch(`${worker.url}/api/v1/docs`)).status, 404);
  } finally {
    await worker.stop();
  }
});

test.run();
