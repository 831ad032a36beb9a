import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAIN } from '../../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { freePort } from '../../support/ports.js';
import { testWorkDir } from '../../support/work-dir.js';

const test = suite('runtime/process/lifecycle');
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase('life');
});
test.after(async () => {
  await db.drop();
});

test('run migrates at startup, serves, and shuts down cleanly on SIGTERM (exit 0)', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'run'], {
    cwd: testWorkDir(),
    env: { PATH: process.env.PATH ?? '', SVC_DATABASE__URL: db.url, SVC_SERVER__PORT: String(port), SVC_LOGGING__LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  let status = 0;
  while (Date.now() < deadline) {
    status = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.is(status, 200, output);
  child.kill('SIGTERM');
  const code = await exited;
  assert.is(code, 0, output);
  assert.match(output, /svc-service stopped/);
  const after = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 'refused');
  assert.is(after, 'refused');
});

test.run();
