import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { runCliProcess } from '../../support/cli.js';
import { loadMigrations } from '../../../runtime/index.js';

const test = suite('runtime/cli/migrate');
let db: TestDatabase;
const env = () => ({ SVC_DATABASE__URL: db.url });

test.before(async () => {
  db = await createTestDatabase('migrate');
});
test.after(async () => {
  await db.drop();
});

test('two concurrent migrate processes apply each migration exactly once', async () => {
  const [a, b] = await Promise.all([runCliProcess(['migrate'], { env: env() }), runCliProcess(['migrate'], { env: env() })]);
  assert.is(a.code, 0, a.stderr);
  assert.is(b.code, 0, b.stderr);
  const build = loadMigrations();
  const rows = await query<{ version: number }>(db.url, 'select version from svc_schema_migrations order by version');
  assert.equal(rows.map((r) => r.version), build.map((m) => m.version));
  const appliedLines = (a.stderr + b.stderr).split('\n').filter((l) => l.startsWith('applied '));
  assert.is(appliedLines.length, build.length, 'each migration reported applied by exactly one process');
});

test('migrate --check exits 0 on a current schema and changes nothing', async () => {
  const before = await query(db.url, 'select * from svc_schema_migrations order by version');
  const result = await runCliProcess(['migrate', '--check'], { env: env() });
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, /schema is current/);
  assert.equal(await query(db.url, 'select * from svc_schema_migrations order by version'), before);
});

test('a database one migration behind is refused by migrate --check, run, bootstrap and user, with the migrate hint', async () => {
  const last = loadMigrations().length;
  const saved = await query(db.url, 'select * from svc_schema_migrations where version = $1', [last]);
  await query(db.url, 'delete from svc_schema_migrations where version = $1', [last]);
  try {
    const runs = await Promise.all([
      runCliProcess(['migrate', '--check'], { env: env() }),
      runCliProcess(['run', '--role', 'worker'], { env: { ...env(), SVC_KV__URL: 'redis://127.0.0.1:6379', SVC_SERVER__PORT: '0' } }),
      runCliProcess(['run'], { env: { ...env(), SVC_DATABASE__AUTO_MIGRATE: 'false', SVC_SERVER__PORT: '0' } }),
      runCliProcess(['bootstrap', '--email', 'a@example.com', '--password-stdin'], { env: env(), input: 'longenough\n' }),
      runCliProcess(['user', 'disable', '--email', 'a@example.com'], { env: env() }),
      runCliProcess(['user', 'enable', '--email', 'a@example.com'], { env: env() }),
    ]);
    for (const r of runs) {
      assert.is(r.code, 2, `expected exit 2, got ${r.code}: ${r.stderr}`);
      assert.match(r.stderr, /svc-service migrate/);
    }
    assert.equal(await query(db.url, 'select count(*)::int as n from organizations'), [{ n: 0 }], 'bootstrap changed nothing');
  } finally {
    const row = saved[0] as { version: number; name: string; checksum: string };
    await query(db.url, 'insert into svc_schema_migrations (version, name, checksum) values ($1, $2, $3)', [row.version, row.name, row.checksum]);
  }
});

test('a database ahead of the build is refused with an upgrade hint', async () => {
  await query(db.url, `insert into svc_schema_migrations (version, name, checksum) values (9999, 'future', 'x')`);
  try {
    const check = await runCliProcess(['migrate', '--check'], { env: env() });
    assert.is(check.code, 2);
    assert.match(check.stderr, /newer than this build/);
    const migrate = await runCliProcess(['migrate'], { env: env() });
    assert.is(migrate.code, 1);
    assert.match(migrate.stderr, /newer than this build/);
  } finally {
    await query(db.url, 'delete from svc_schema_migrations where version = 9999');
  }
});

test('a migration whose recorded checksum differs is refused', async () => {
  await query(db.url, `update svc_schema_migrations set checksum = 'tampered' where version = 1`);
  try {
    const check = await runCliProcess(['migrate', '--check'], { env: env() });
    assert.is(check.code, 2);
    assert.match(check.stderr, /does not match this build/);
  } finally {
    const first = loadMigrations()[0]!;
    await query(db.url, `update svc_schema_migrations set checksum = $1 where version = 1`, [first.checksum]);
  }
});

test('configuration errors exit 1 and list every problem', async () => {
  const result = await runCliProcess(['migrate', '--check'], { env: { ...env(), SVC_WORKER__SLOTS: '"x"', SVC_SERVER__PORT: '-5', SVC_BOGUS__KEY: '1' } });
  assert.is(result.code, 1);
  for (const needle of ['worker.slots', 'server.port', 'bogus']) assert.ok(result.stderr.includes(needle), result.stderr);
});

test('--version prints the build version', async () => {
  const result = await runCliProcess(['--version']);
  assert.is(result.code, 0);
  assert.match(result.stdout.trim(), /^\d+\.\d+\.\d+/);
});

test('migrate-run-objects validates its options and reports nothing to convert', async () => {
  const bad = await runCliProcess(['migrate-run-objects', '--limit', '0'], { env: env() });
  assert.is(bad.code, 1);
  const noBackup = await runCliProcess(['migrate-run-objects', '--apply'], { env: env() });
  assert.is(noBackup.code, 1);
  assert.match(noBackup.stderr, /--backup-dir/);
  const inspect = await runCliProcess(['migrate-run-objects'], { env: env() });
  assert.is(inspect.code, 0, inspect.stderr);
  assert.is(JSON.parse(inspect.stdout).inspected, 0);
});

test.run();
