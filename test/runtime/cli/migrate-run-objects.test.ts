import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJobContext, deliverOutbox } from '../../../jobs/index.js';
import { createDirectoryStore, type ObjectStore } from '../../../runtime/index.js';
import { runCliProcess } from '../../support/cli.js';
import { query } from '../../support/database.js';
import { Client } from '../../support/identity.js';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import { startTestService, type TestService } from '../../support/service.js';

// migrate-run-objects (spec 1.2) against runs the test itself writes in the pre-paging layout
// (README, "Legacy run objects"): real runs made through the API, whose display is then moved
// into one unpaged JSON object pointed at by run_legacy_displays, with the checkpoint under
// its legacy key. The service is stopped while the command runs, as the spec requires.

const test = suite('runtime/cli/migrate-run-objects');
const scratch = mkdtempSync(join(tmpdir(), 'svc-legacy-'));
const objectsDir = join(scratch, 'objects');
const keyFile = join(scratch, 'keyring.json');
const backupDir = join(scratch, 'backups');
let f: RunFixture;
let service: TestService | undefined;
let objects: ObjectStore;

interface LegacyRun {
  id: string;
  items: any[];
  display: Buffer;
  checkpoint: Buffer;
  checkpointKey: string;
}
const runs: Record<string, LegacyRun> = {};
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const env = () => ({ SVC_DATABASE__URL: f.db.url, SVC_OBJECTS__DIRECTORY: objectsDir, SVC_ENCRYPTION__KEY_FILE: keyFile });
const cli = (args: string[]) => runCliProcess(args, { env: env() });

/** Rewrites a completed run into the legacy layout; `edit` may change the listed items. */
async function toLegacy(runId: string, edit: (items: any[]) => any[] = (items) => items, nextOrdinal?: number): Promise<LegacyRun> {
  const items = edit((await f.client.get(`/api/v1/runs/${runId}/items?limit=500`)).body.items);
  // Runs of that layout kept their last checkpoint (a run that ends now keeps none): one is made
  // up, opaque bytes as a checkpoint is to the conversion (moved byte for byte).
  const checkpoint = Buffer.from(pack({ format: 'legacy-checkpoint', run_id: runId, messages: items.length }));
  const checkpointKey = `runs/${runId}/checkpoint.msgpack`;
  await objects.put(checkpointKey, checkpoint);
  const display = Buffer.from(JSON.stringify({ format: 'svc.run-display.v0', run_id: runId, items }));
  await objects.put(`runs/${runId}/display.json`, display, { contentType: 'application/json' });
  await query(f.db.url, 'delete from run_items where run_id = $1', [runId]);
  await query(f.db.url, 'delete from run_display_pages where run_id = $1', [runId]);
  await query(f.db.url, 'update runs set checkpoint_key = $2, next_ordinal = $3 where id = $1', [runId, checkpointKey, nextOrdinal ?? items.length + 1]);
  await query(f.db.url, 'insert into run_legacy_displays (run_id, display_key, display_digest, checkpoint_digest) values ($1, $2, $3, $4)', [
    runId,
    `runs/${runId}/display.json`,
    sha256(display),
    sha256(checkpoint),
  ]);
  return { id: runId, items, display, checkpoint, checkpointKey };
}

async function completedRun(text: string): Promise<string> {
  const created = await send(f, text);
  const run = await waitForRun(f, created.body.run.id);
  assert.is(run.status, 'completed');
  return run.id;
}

/** Items 3…n beside the run's own two, so the display spans several pages. */
function synthetic(from: number, to: number): any[] {
  const out = [];
  for (let n = from; n <= to; n++) {
    out.push({ id: `itm_synth_${n}`, kind: 'text_message', state: 'completed', ordinal: n, content: { text: `line ${n}` }, content_refs: {}, first_stream_id: `${1000 + n}-0`, last_stream_id: `${1000 + n}-1`, started_at: '2024-01-01T00:00:00.000Z', ended_at: '2024-01-01T00:00:01.000Z' });
  }
  return out;
}

test.before(async () => {
  // Runs of the pre-paging layout come from releases before inline checkpoints (0016): every
  // checkpoint an object.
  f = await startRunFixture({ env: { SVC_OBJECTS__DIRECTORY: objectsDir, SVC_ENCRYPTION__KEY_FILE: keyFile, SVC_CONTROL__SCAN_SECONDS: '3600', SVC_OBJECTS__INLINE_CHECKPOINT_MAX_BYTES: '0' } });
  objects = createDirectoryStore({ directory: objectsDir });
  const names = ['small', 'big', 'pages', 'missing', 'damaged', 'discarded', 'cleanup', 'running'];
  const ids: Record<string, string> = {};
  for (const name of names) ids[name] = await completedRun(name);
  // Replaced checkpoints are cleaned up first: a pending cleanup is a refusal of its own.
  await deliverOutbox(createJobContext(f.service.services), { kinds: ['checkpoint_cleanup'] });
  runs.small = await toLegacy(ids.small!);
  runs.big = await toLegacy(ids.big!, (items) => [...items, ...synthetic(items.length + 1, 150)]);
  for (const name of names.slice(2)) {
    runs[name] = name === 'discarded'
      ? await toLegacy(ids[name]!, (items) => [...items, { ...items[items.length - 1], id: 'itm_discarded', ordinal: items.length + 1, state: 'discarded' }], 3)
      : await toLegacy(ids[name]!);
  }
  await query(f.db.url, `insert into run_display_pages (run_id, first_ordinal, last_ordinal, object_key, digest, size_bytes, item_count) values ($1, 1, 2, 'runs/x/pages/y', 'z', 1, 2)`, [runs.pages!.id]);
  await objects.delete(`runs/${runs.missing!.id}/display.json`);
  await objects.put(`runs/${runs.damaged!.id}/display.json`, Buffer.concat([runs.damaged!.display, Buffer.from(' ')]));
  const [ws] = await query<{ workspace_id: string }>(f.db.url, 'select workspace_id from runs where id = $1', [runs.cleanup!.id]);
  await query(f.db.url, `insert into outbox (id, kind, workspace_id, payload) values ('obx_pending_cleanup', 'checkpoint_cleanup', $1, $2)`, [ws!.workspace_id, JSON.stringify({ key: `runs/${runs.cleanup!.id}/checkpoints/000001-old.msgpack` })]);
  // Replicas stopped, as the command requires (the fixture's service is restarted later).
  await f.service.stop();
  await query(f.db.url, `update runs set status = 'running' where id = $1`, [runs.running!.id]);
});
test.after(async () => {
  await service?.stop();
  await f?.model.close();
  await f?.db.drop();
  await objects?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('migrate, migrate --check and startup refuse legacy pointers and name the command', async () => {
  for (const args of [['migrate', '--check'], ['migrate'], ['run', '--role', 'all']]) {
    const result = await runCliProcess(args, { env: { ...env(), SVC_SERVER__PORT: '0', SVC_KV__URL: '' }, timeoutMs: 30_000 });
    assert.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /8 run\(s\) still use the unpaged display format/);
    assert.match(result.stderr, /svc-service migrate-run-objects/);
  }
});

test('inspect reports each run (convertible or refused with its reason) and writes nothing', async () => {
  const listing = async () => (await objects.list('runs/', { limit: 1000 })).keys;
  const before = { objects: JSON.stringify(await listing()), runs: await query(f.db.url, 'select * from runs order by id'), legacy: await query(f.db.url, 'select * from run_legacy_displays order by run_id') };
  const result = await cli(['migrate-run-objects']);
  assert.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout);
  assert.is(report.mode, 'inspect');
  assert.is(report.legacy_runs, 8);
  assert.is(report.inspected, 8);
  assert.is(report.convertible, 2);
  assert.is(report.converted, 0);
  const reasons = Object.fromEntries(report.refused.map((r: { run_id: string; reason: string }) => [r.run_id, r.reason]));
  assert.equal(reasons, {
    [runs.pages!.id]: 'existing_pages',
    [runs.missing!.id]: 'missing_object',
    [runs.damaged!.id]: 'damaged_object',
    [runs.discarded!.id]: 'discarded_items',
    [runs.cleanup!.id]: 'unfinished_cleanup',
    [runs.running!.id]: 'not_drained',
  });
  const big = report.runs.find((r: { run_id: string }) => r.run_id === runs.big!.id);
  assert.equal(big, { run_id: runs.big!.id, result: 'convertible', items: 150 });
  assert.is(JSON.stringify(await listing()), before.objects);
  assert.equal(await query(f.db.url, 'select * from runs order by id'), before.runs);
  assert.equal(await query(f.db.url, 'select * from run_legacy_displays order by run_id'), before.legacy);
  assert.is(JSON.parse((await cli(['migrate-run-objects', '--limit', '3'])).stdout).inspected, 3, '--limit lowers the inspection');
});

test('--apply needs a backup dir; --limit 1 converts exactly one run', async () => {
  assert.is((await cli(['migrate-run-objects', '--apply'])).code, 1);
  assert.is((await cli(['migrate-run-objects', '--apply', '--backup-dir', join(scratch, 'nope')])).code, 1);
  assert.is((await cli(['migrate-run-objects', '--limit', '1001'])).code, 1);
  mkdirSync(backupDir, { mode: 0o700 });
  const result = await cli(['migrate-run-objects', '--apply', '--backup-dir', backupDir, '--limit', '1']);
  const report = JSON.parse(result.stdout);
  assert.is(report.converted, 1, result.stderr);
  assert.is(result.code, report.refused.length > 0 ? 1 : 0, 'refused runs (met before the limit) make --apply exit 1');
  const legacy = await query<{ run_id: string }>(f.db.url, 'select run_id from run_legacy_displays');
  assert.is(legacy.length, 7);
});

test('--apply converts every convertible run: backups, pages, the checkpoint moved byte for byte, legacy objects released', async () => {
  const result = await cli(['migrate-run-objects', '--apply', '--backup-dir', backupDir]);
  const report = JSON.parse(result.stdout);
  assert.is(report.converted, 1, result.stderr);
  assert.is(report.refused.length, 6);
  assert.is(result.code, 1, 'refused runs make --apply exit 1');
  const remaining = new Set((await query<{ run_id: string }>(f.db.url, 'select run_id from run_legacy_displays')).map((r) => r.run_id));
  for (const name of ['small', 'big']) {
    const run = runs[name]!;
    assert.not.ok(remaining.has(run.id), `${name} converted`);
    const dir = join(backupDir, run.id);
    assert.is(statSync(dir).mode & 0o777, 0o700);
    for (const file of ['display.json', 'checkpoint.msgpack', 'pointers.json']) assert.is(statSync(join(dir, file)).mode & 0o777, 0o600, file);
    assert.ok(readFileSync(join(dir, 'display.json')).equals(run.display));
    assert.ok(readFileSync(join(dir, 'checkpoint.msgpack')).equals(run.checkpoint));
    const pointers = JSON.parse(readFileSync(join(dir, 'pointers.json'), 'utf8'));
    assert.is(pointers.display_key, `runs/${run.id}/display.json`);
    assert.is(pointers.checkpoint_key, run.checkpointKey);
    const [row] = await query<{ checkpoint_key: string }>(f.db.url, 'select checkpoint_key from runs where id = $1', [run.id]);
    assert.is.not(row!.checkpoint_key, run.checkpointKey);
    assert.ok(Buffer.from((await objects.get(row!.checkpoint_key))!).equals(run.checkpoint), 'checkpoint bytes preserved');
  }
  const pages = await query<{ first_ordinal: number; last_ordinal: number }>(f.db.url, 'select first_ordinal, last_ordinal from run_display_pages where run_id = $1 order by first_ordinal', [runs.big!.id]);
  assert.equal(pages.map((p) => [p.first_ordinal, p.last_ordinal]), [[1, 64], [65, 128], [129, 150]]);
  const cleanup = await query<{ payload: { keys: string[] } }>(f.db.url, `select payload from outbox where kind = 'checkpoint_cleanup' and payload ? 'keys' and state = 'pending'`);
  assert.ok(cleanup.some((c) => c.payload.keys.includes(`runs/${runs.big!.id}/display.json`) && c.payload.keys.includes(runs.big!.checkpointKey)));
});

test('refused runs convert once fixed; then zero are converted and the service starts and serves the same items', async () => {
  await query(f.db.url, 'delete from run_display_pages where run_id = $1', [runs.pages!.id]);
  await objects.put(`runs/${runs.missing!.id}/display.json`, runs.missing!.display);
  await objects.put(`runs/${runs.damaged!.id}/display.json`, runs.damaged!.display);
  const fixed = Buffer.from(JSON.stringify({ format: 'svc.run-display.v0', run_id: runs.discarded!.id, items: runs.discarded!.items.slice(0, 2) }));
  await objects.put(`runs/${runs.discarded!.id}/display.json`, fixed);
  await query(f.db.url, 'update run_legacy_displays set display_digest = $2 where run_id = $1', [runs.discarded!.id, sha256(fixed)]);
  runs.discarded!.items = runs.discarded!.items.slice(0, 2);
  await query(f.db.url, `update outbox set state = 'delivered', settled_at = now() where id = 'obx_pending_cleanup'`);
  await query(f.db.url, `update runs set status = 'completed' where id = $1`, [runs.running!.id]);
  const again = await cli(['migrate-run-objects', '--apply', '--backup-dir', backupDir]);
  assert.is(again.code, 0, again.stderr);
  assert.is(JSON.parse(again.stdout).converted, 6);
  const last = await cli(['migrate-run-objects', '--apply', '--backup-dir', backupDir]);
  assert.is(last.code, 0, last.stderr);
  const report = JSON.parse(last.stdout);
  assert.equal([report.legacy_runs, report.converted, report.refused.length], [0, 0, 0]);
  assert.is((await cli(['migrate', '--check'])).code, 0);

  service = await startTestService({ databaseUrl: f.db.url, env: { SVC_OBJECTS__DIRECTORY: objectsDir, SVC_ENCRYPTION__KEY_FILE: keyFile, SVC_CONTROL__SCAN_SECONDS: '3600' } });
  const api = new Client(service.url, f.client.headers);
  for (const run of Object.values(runs)) {
    const page = await api.get(`/api/v1/runs/${run.id}/items?limit=500`);
    assert.is(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.items, run.items, `items of ${run.id}: ids, order, content, stream ids`);
    assert.ok(page.body.complete);
  }
  const older = await api.get(`/api/v1/runs/${runs.big!.id}/items?before=70&limit=10`);
  assert.equal(older.body.items.map((i: { ordinal: number }) => i.ordinal), [60, 61, 62, 63, 64, 65, 66, 67, 68, 69]);
  await deliverOutbox(createJobContext(service.services), { kinds: ['checkpoint_cleanup'] });
  assert.is(await objects.get(`runs/${runs.big!.id}/display.json`), null, 'the legacy objects are deleted once the new pointers committed');
  assert.is(await objects.get(runs.big!.checkpointKey), null);
});

test.run();
