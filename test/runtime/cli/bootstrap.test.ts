import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { runCliProcess } from '../../support/cli.js';

const test = suite('runtime/cli/bootstrap');
let db: TestDatabase;
const env = () => ({ SVC_DATABASE__URL: db.url });

test.before(async () => {
  db = await createTestDatabase('bootstrap');
  const migrated = await runCliProcess(['migrate'], { env: env() });
  assert.is(migrated.code, 0, migrated.stderr);
});
test.after(async () => {
  await db.drop();
});

test('invalid input exits 1 and changes nothing', async () => {
  const cases = [
    runCliProcess(['bootstrap', '--email', 'not-an-email', '--password-stdin'], { env: env(), input: 'longenough\n' }),
    runCliProcess(['bootstrap', '--email', 'a@example.com', '--password-stdin'], { env: env(), input: 'short\n' }),
    runCliProcess(['bootstrap', '--email', 'a@example.com', '--password-stdin'], { env: env(), input: '' }),
    // no terminal and no --password-stdin: nothing to prompt on
    runCliProcess(['bootstrap', '--email', 'a@example.com'], { env: env() }),
  ];
  for (const result of await Promise.all(cases)) {
    assert.is(result.code, 1, result.stderr);
    assert.is(result.stdout, '');
  }
  assert.equal(await query(db.url, 'select count(*)::int as n from organizations'), [{ n: 0 }]);
});

test('bootstrap creates the organization, workspace and administrator and prints their ids', async () => {
  const result = await runCliProcess(['bootstrap', '--email', 'Admin@Example.com', '--password-stdin'], { env: env(), input: 'correct horse battery\nignored second line\n' });
  assert.is(result.code, 0, result.stderr);
  const ids = JSON.parse(result.stdout) as { organization_id: string; workspace_id: string; user_id: string };
  assert.match(ids.organization_id, /^org_/);
  assert.match(ids.workspace_id, /^ws_/);
  assert.match(ids.user_id, /^usr_/);
  const [user] = await query<{ email: string; organization_role: string; password_hash: string }>(db.url, 'select * from users where id = $1', [ids.user_id]);
  assert.is(user!.organization_role, 'admin');
  assert.match(user!.password_hash, /^scrypt\$17\$8\$1\$/);
  assert.not.ok(user!.password_hash.includes('correct horse'));
  const [membership] = await query<{ role: string }>(db.url, 'select role from memberships where workspace_id = $1 and user_id = $2', [ids.workspace_id, ids.user_id]);
  assert.is(membership!.role, 'admin');
});

test('a second bootstrap exits 3 and changes nothing', async () => {
  const before = await query(db.url, 'select id from users order by id');
  const result = await runCliProcess(['bootstrap', '--email', 'other@example.com', '--password-stdin'], { env: env(), input: 'longenough\n' });
  assert.is(result.code, 3);
  assert.match(result.stderr, /already initialized/);
  assert.equal(await query(db.url, 'select id from users order by id'), before);
});

test('user disable and enable flip the account and keep its grants', async () => {
  const disable = await runCliProcess(['user', 'disable', '--email', 'admin@example.com'], { env: env() });
  assert.is(disable.code, 0, disable.stderr);
  assert.is(JSON.parse(disable.stdout).status, 'disabled');
  let [row] = await query<{ disabled_at: Date | null; n: number }>(
    db.url,
    `select u.disabled_at, (select count(*)::int from memberships m where m.user_id = u.id) as n from users u where lower(email) = 'admin@example.com'`,
  );
  assert.ok(row!.disabled_at);
  assert.is(row!.n, 1);
  const again = await runCliProcess(['user', 'disable', '--email', 'admin@example.com'], { env: env() });
  assert.is(again.code, 0);
  assert.is(JSON.parse(again.stdout).changed, false);
  const enable = await runCliProcess(['user', 'enable', '--email', 'ADMIN@example.com'], { env: env() });
  assert.is(enable.code, 0, enable.stderr);
  [row] = await query(db.url, `select u.disabled_at, (select count(*)::int from memberships m where m.user_id = u.id) as n from users u where lower(email) = 'admin@example.com'`);
  assert.is(row!.disabled_at, null);
  assert.is(row!.n, 1);
});

test('user commands refuse an unknown email with exit 1', async () => {
  const result = await runCliProcess(['user', 'disable', '--email', 'nobody@example.com'], { env: env() });
  assert.is(result.code, 1);
  assert.match(result.stderr, /no user/);
});

test.run();
