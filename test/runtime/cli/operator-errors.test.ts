import { createServer, type Server } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCliProcess } from '../../support/cli.js';
import { createTestDatabase, urlFor, type TestDatabase } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { spawnService } from '../../support/processes.js';

// What an operator reads when the database, the port or Redis is not there (issue: clear
// errors for operators). The messages name what to change and never a password.
const test = suite('runtime/cli/operator-errors');
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase('operr');
});
test.after(async () => {
  await db?.drop();
});

test('an unreachable database names the database, the URL host and the key, never the password', async () => {
  const port = await freePort();
  const result = await runCliProcess(['run'], { env: { SVC_DATABASE__URL: `postgres://svc:hunter2-secret@127.0.0.1:${port}/svcdb`, SVC_SERVER__PORT: '0' } });
  assert.is(result.code, 1);
  assert.match(result.stderr, `svc-service: cannot use the database "svcdb" at 127.0.0.1:${port}: ECONNREFUSED`);
  assert.match(result.stderr, 'check database.url (SVC_DATABASE__URL)');
  assert.not.match(result.stdout + result.stderr, 'hunter2-secret');
});

test('a database that does not exist is named as such by migrate and bootstrap', async () => {
  const missing = urlFor('svc_no_such_database_here');
  for (const args of [['migrate'], ['bootstrap', '--email', 'a@example.com', '--password-stdin']]) {
    const result = await runCliProcess(args, { env: { SVC_DATABASE__URL: missing }, input: 'a-long-password\n' });
    assert.is(result.code, 1, args.join(' '));
    assert.match(result.stderr, 'cannot use the database "svc_no_such_database_here" at 127.0.0.1:5432: the database does not exist');
  }
});

test('a busy port names server.port and its variable', async () => {
  const busy: Server = createServer();
  const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
  try {
    const result = await runCliProcess(['run'], { env: { SVC_DATABASE__URL: db.url, SVC_SERVER__PORT: String(port) } });
    assert.is(result.code, 1);
    assert.match(result.stderr, `cannot listen on 127.0.0.1:${port}`);
    assert.match(result.stderr, 'change server.port (SVC_SERVER__PORT)');
  } finally {
    busy.close();
  }
});

test('configuration mistakes in the environment and the file exit 1 naming the variable or the line and column', async () => {
  const typo = await runCliProcess(['migrate'], { env: { SVC_DATABASE__URL: db.url, SVC_SERVER_PORT: '9000' } });
  assert.is(typo.code, 1);
  assert.match(typo.stderr, 'SVC_SERVER_PORT: ignored spelling of server.port; overrides take two underscores after the section: SVC_SERVER__PORT');
  const unknown = await runCliProcess(['migrate'], { env: { SVC_DATABASE__URL: db.url, SVC_WORKER__SLOT: '9' } });
  assert.match(unknown.stderr, 'SVC_WORKER__SLOT: no configuration key worker.slot');
});

test('--help explains the SVC_* overrides', async () => {
  const help = await runCliProcess(['--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, 'SVC_<SECTION>__<KEY>=value overrides a configuration key');
  assert.match(help.stdout, 'dev-model');
});

test('an unreachable Redis at startup: ready and degraded, with one clear warning and no password', async () => {
  const port = await freePort();
  const service = await spawnService('all', { SVC_DATABASE__URL: db.url, SVC_KV__URL: `redis://:redis-secret@127.0.0.1:${port}` });
  try {
    assert.equal(await fetch(`http://127.0.0.1:${service.port}/readyz`).then((r) => r.json()), { status: 'ready', role: 'all', degraded: ['redis'] });
  } finally {
    service.kill('SIGTERM');
  }
  assert.is(await service.exited, 0);
  // The startup check of autovacuum (vacuum-check.test.ts) warns too on a server that has it off.
  const warnings = service.output().split('\n').filter((line) => (line.includes('"level":"warn"') || line.includes('"level":40')) && !line.includes('autovacuum'));
  assert.is(warnings.length, 1, service.output());
  assert.match(warnings[0]!, `key-value store unreachable at startup (Redis at 127.0.0.1:${port}, kv.url): serving degraded`);
  assert.not.match(service.output(), 'redis-secret');
});

test.run();
