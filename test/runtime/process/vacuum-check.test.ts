// The startup check of autovacuum (runtime/process/vacuum-check.ts): a process warns when the
// server's setting, or a table's own storage parameter, leaves the service's tables unvacuumed,
// and starts either way.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, createPool, readAutovacuumState } from '../../../runtime/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { startTestService } from '../../support/service.js';

const test = suite('runtime/process/vacuum-check');
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase('vac');
});
test.after(async () => {
  await db.drop();
});

const warnings = (records: Array<Record<string, unknown>>): string[] =>
  records.filter((r) => r['level'] === 40 || r['level'] === 'warn').map((r) => String(r['msg'] ?? ''));

test('a table with autovacuum_enabled = false is named at startup (or the server setting, when autovacuum is off); the process starts', async () => {
  const first = await startTestService({ databaseUrl: db.url });
  let serverOn: boolean;
  try {
    const [setting] = await query<{ on: boolean }>(db.url, `select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as on`);
    serverOn = setting!.on;
    const before = warnings(first.logs.records).filter((m) => m.includes('autovacuum'));
    // Migrated, no table option set: only the server setting can be the cause.
    if (serverOn) assert.equal(before, []);
    else assert.ok(before.some((m) => m.startsWith('PostgreSQL autovacuum is off')), JSON.stringify(before));
  } finally {
    await first.stop();
  }
  await query(db.url, 'alter table runs set (autovacuum_enabled = false)');
  await query(db.url, 'alter table inbox_entries set (autovacuum_enabled = off)');
  // What the check reads, whatever the server's setting: both tables, by name.
  const pool = createPool({ url: db.url, size: 1, statementTimeoutMs: 0, applicationName: 'test', logger: createLogger({ level: 'silent' }) });
  try {
    const state = await readAutovacuumState(pool);
    assert.equal(state.tablesOff, ['inbox_entries', 'runs']);
    assert.is(state.server, serverOn);
  } finally {
    await pool.end();
  }
  const second = await startTestService({ databaseUrl: db.url });
  try {
    assert.is((await fetch(`${second.url}/readyz`)).status, 200);
    const found = warnings(second.logs.records).filter((m) => m.includes('autovacuum'));
    if (serverOn) {
      assert.is(found.length, 1, JSON.stringify(found));
      assert.ok(found[0]!.includes('inbox_entries, runs'), found[0]);
      const record = second.logs.records.find((r) => Array.isArray(r['autovacuum_disabled_tables']));
      assert.equal(record?.['autovacuum_disabled_tables'], ['inbox_entries', 'runs']);
    } else {
      // The server-wide cause is the one named (it covers the tables too).
      assert.ok(found.some((m) => m.startsWith('PostgreSQL autovacuum is off')), JSON.stringify(found));
    }
  } finally {
    await second.stop();
    await query(db.url, 'alter table runs reset (autovacuum_enabled)');
    await query(db.url, 'alter table inbox_entries reset (autovacuum_enabled)');
  }
});

test.run();
