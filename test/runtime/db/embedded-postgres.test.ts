import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, startEmbeddedPostgres } from '../../../runtime/index.js';
import { freePort } from '../../support/ports.js';
import { spawnService } from '../../support/processes.js';

const test = suite('runtime/db/embedded-postgres');
const dirs: string[] = [];
const logger = createLogger({ level: 'silent' });
const scratch = (mode: number): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
  chmodSync(dir, mode);
  dirs.push(dir);
  return dir;
};

test.after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function selectOne(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('select 1 as one')).rows;
  } finally {
    await client.end();
  }
}

test('starts a real PostgreSQL in data/ even when data/ was created owner-only; a second caller reuses it', async () => {
  const data = join(scratch(0o755), 'data');
  mkdirSync(data, { mode: 0o700 });
  writeFileSync(join(data, 'keyring.json'), '{}', { mode: 0o600 });
  const directory = join(data, 'postgres');
  const port = await freePort();
  const first = await startEmbeddedPostgres({ directory, port, logger });
  try {
    assert.is(first.owned, true);
    assert.equal(await selectOne(first.url), [{ one: 1 }]);
    assert.ok(existsSync(join(directory, 'PG_VERSION')), 'the data directory is where it was asked for');
    const second = await startEmbeddedPostgres({ directory, port, logger });
    assert.is(second.owned, false, 'a running server on the same data directory is reused');
    assert.is(second.url, first.url);
  } finally {
    await first.stop();
  }
});

test('as root, a data directory below a private folder moves to a reachable place instead of failing', async () => {
  if (process.getuid?.() !== 0) return; // only root runs the server as another OS user
  const directory = join(scratch(0o700), 'data', 'postgres');
  const moved = join('/var/lib/svc-service/embedded', createHash('sha256').update(directory).digest('hex').slice(0, 16));
  dirs.push(moved);
  const server = await startEmbeddedPostgres({ directory, port: await freePort(), logger });
  try {
    assert.equal(await selectOne(server.url), [{ one: 1 }]);
    assert.ok(existsSync(join(moved, 'postgres', 'PG_VERSION')));
  } finally {
    await server.stop();
  }
});

test('SIGTERM to a service on the embedded default shuts down cleanly: exit 0, no warning, the server stopped', async () => {
  const directory = join(scratch(0o755), 'postgres');
  const port = await freePort();
  // The HTTP port must differ from the database's: two free-port probes in a row may answer the
  // same port (neither is bound in between), which once made the service's listen fail in CI.
  let httpPort = await freePort();
  while (httpPort === port) httpPort = await freePort();
  // Two minutes to become ready: the first start runs initdb, slow on a loaded machine.
  const service = await spawnService('all', { SVC_DATABASE__EMBEDDED_DIRECTORY: directory, SVC_DATABASE__EMBEDDED_PORT: String(port) }, { readyTimeoutMs: 120_000, port: httpPort });
  try {
    assert.equal(await fetch(`http://127.0.0.1:${service.port}/readyz`).then((r) => r.json()), { status: 'ready', role: 'all' });
  } finally {
    service.kill('SIGTERM');
  }
  assert.is(await service.exited, 0);
  const lines = service.output().split('\n').filter((line) => line.startsWith('{'));
  const levels = lines.map((line) => (JSON.parse(line) as { level: string | number }).level);
  assert.ok(lines.some((line) => line.includes('embedded PostgreSQL started')), service.output());
  assert.equal(lines.filter((_, i) => !['info', 'debug', 'trace', 30, 20, 10].includes(levels[i]!)), [], `no warning or error at a clean shutdown\n${service.output()}`);
  const probe = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1500 });
  const refused = await probe.connect().then(() => false, () => true);
  await probe.end().catch(() => undefined);
  assert.ok(refused, 'the embedded server stopped with the service');
});

test.run();
