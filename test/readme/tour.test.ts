import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAIN } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/ports.js';
import { spawnService, type ServiceProcess } from '../support/processes.js';
import { testWorkDir } from '../support/work-dir.js';

// The README's API tour, run as written: the shell blocks marked `<!-- tour` are read from
// README.md itself (never a copy), so the README cannot drift from what works. The service is
// started as `npm start` starts it (`node dist/main.js run`, role all) on the machine's
// PostgreSQL (a fresh database: the embedded default's own start and SIGTERM are covered by
// test/runtime/db/embedded-postgres.test.ts), next to `node dist/main.js dev-model`. The only
// change made to the commands is the two ports, so parallel test files never collide.
const test = suite('readme/tour');
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README_MODEL = '127.0.0.1:18999';
const README_SERVICE = '127.0.0.1:8080';

let db: TestDatabase;
let service: ServiceProcess | undefined;
let model: { kill(): void; exited: Promise<number | null>; output(): string } | undefined;

/** Every ```sh block that follows a `<!-- tour` marker line, in order. */
export function tourBlocks(readme: string): string[] {
  const blocks: string[] = [];
  const lines = readme.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('<!-- tour')) continue;
    assert.is(lines[i + 1], '```sh', `the tour marker on README line ${i + 1} must be followed by a sh block`);
    const end = lines.indexOf('```', i + 2);
    blocks.push(lines.slice(i + 2, end).join('\n'));
  }
  return blocks;
}

async function startDevModel(port: number): Promise<NonNullable<typeof model>> {
  const child = spawn(process.execPath, [MAIN, 'dev-model', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!output.includes('dev model listening')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dev-model did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { kill: () => child.kill('SIGTERM'), exited, output: () => output };
}

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test.before(async () => {
  db = await createTestDatabase('tour');
});
test.after(async () => {
  service?.kill('SIGKILL');
  model?.kill();
  await db?.drop();
});

test('the README tour runs as written to completed, waiting, resumed and forked runs; a failed run keeps its items; SIGTERM is clean', async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = tourBlocks(readme);
  assert.ok(blocks.length >= 4, 'the tour is marked in the README');
  const tour = blocks.join('\n');
  assert.ok(tour.includes(README_MODEL) && tour.includes(README_SERVICE), 'the tour names the ports the README starts things on');
  assert.ok(readme.includes(`SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS='["http://${README_MODEL}"]' npm start`), 'the README starts the service allowing the dev model');

  const modelPort = await freePort();
  model = await startDevModel(modelPort);
  const modelOrigin = `http://127.0.0.1:${modelPort}`;
  const workDir = testWorkDir();
  service = await spawnService('all', { SVC_DATABASE__URL: db.url, SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([modelOrigin]) });
  const script = tour.replaceAll(README_MODEL, `127.0.0.1:${modelPort}`).replaceAll(README_SERVICE, `127.0.0.1:${service.port}`);
  // The operator command shares the service's database, key ring and objects (the service runs in workDir).
  const run = await runBash(`${script}\necho "TOUR_IDS $KEY $AGENT $THR"`, {
    SVC_DATABASE__URL: db.url,
    SVC_ENCRYPTION__KEY_FILE: join(workDir, 'data/keyring.json'),
    SVC_OBJECTS__DIRECTORY: join(workDir, 'data/objects'),
    SVC_LOGGING__LEVEL: 'warn',
  });
  const out = run.stdout;
  const context = `\n--- stdout\n${out}\n--- stderr\n${run.stderr}`;
  assert.match(out, /\{"organization_id":"org_[^"]+","workspace_id":"ws_[^"]+","user_id":"usr_[^"]+"\}/, context);
  assert.match(out, '{"result":"succeeded"}\n', context);
  assert.match(out, '["dev-model"]', context);
  assert.match(out, '{"key":"dev","api":"openai-responses"}', context);
  const statuses = out.split('\n').filter((line) => /^(completed|waiting|failed|cancelled|still \w+)$/.test(line));
  assert.equal(statuses, ['completed', 'waiting', 'completed', 'completed'], context);
  assert.match(out, '{"kind":"user_message","text":"Hello"}\n{"kind":"text_message","text":"You said: Hello"}', context);
  assert.match(out, /"wait_reason":"approval","pending":\[\{"tool_call_id":"[^"]+","tool_name":"echo"\}\]/, context);
  assert.match(out, /^The tool answered: .*hi/m, context);
  assert.match(out, /\[\{"id":"run_[^"]+","lineage":"fork"\},\{"id":"run_[^"]+","lineage":"resume"\},\{"id":"run_[^"]+","lineage":"root"\}\]/, context);
  assert.match(out, 'event: stream.live', context);

  // Item 5 of the first hour, from the tour's side: with the model gone, the next message
  // fails on its first model request, and its items still hold the user's message.
  const [, key, agent, thread] = /^TOUR_IDS (\S+) (\S+) (\S+)$/m.exec(out) ?? [];
  assert.ok(key && agent && thread, context);
  model.kill();
  assert.is(await model.exited, 0);
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${service!.port}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } }).then((r) => r.json() as Promise<any>); // any: JSON read field by field
  const posted = await api(`/threads/${thread}/inbox`, { method: 'POST', headers: { 'idempotency-key': 'after-model-gone' }, body: JSON.stringify({ agent_id: agent, payload: { content: [{ type: 'text', text: 'Anyone there?' }] } }) });
  let failed = posted.run;
  for (let i = 0; i < 300 && !['failed', 'completed'].includes(failed.status); i++) {
    await new Promise((r) => setTimeout(r, 200));
    failed = await api(`/runs/${posted.run.id}`);
  }
  assert.is(failed.status, 'failed');
  assert.match(failed.failure.code, /^model_/);
  const items = await api(`/runs/${failed.id}/items`);
  assert.equal(items.items.map((i: { kind: string }) => i.kind), ['user_message']);
  assert.is(items.items[0].content.content[0].text, 'Anyone there?');

  service.kill('SIGTERM');
  assert.is(await service.exited, 0);
  // The startup check's autovacuum warning (on a server that has it off) is not the shutdown's.
  const unclean = service.output().split('\n').filter((line) => /"level":"(warn|error|fatal)"/.test(line) && !line.includes('model') && !line.includes('autovacuum'));
  assert.equal(unclean, [], 'a clean SIGTERM logs no warning');
  service = undefined;
});

test.run();
