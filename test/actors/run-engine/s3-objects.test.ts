import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJobContext, runSweep } from '../../../jobs/index.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, until, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import { startS3rver, TEST_BUCKET, type RunningS3rver } from '../../runtime/objects/s3rver-harness.js';

// The deployment shape with S3: checkpoints, display pages and their cleanup go through the
// S3 driver (s3rver on a free port, path-style addressing).
const test = suite('actors/run-engine/s3-objects');
let s3: RunningS3rver;
let f: RunFixture;
const CALLS = 40;

test.before(async () => {
  s3 = await startS3rver();
  let calls = 0;
  f = await startRunFixture({
    agentConfig: { toolsets: { utilities: { enabled: true, config: {}, tools: {} } } },
    script: () =>
      ++calls === 1
        ? { type: 'tool_calls', calls: Array.from({ length: CALLS }, (_, i) => ({ id: `c${i}`, name: 'echo', arguments: JSON.stringify({ text: `s3 item ${i}` }) })) }
        : { type: 'text', text: 'stored in s3' },
    env: {
      SVC_OBJECTS__DRIVER: 's3',
      SVC_OBJECTS__BUCKET: TEST_BUCKET,
      SVC_OBJECTS__ENDPOINT: s3.endpoint,
      SVC_OBJECTS__FORCE_PATH_STYLE: 'true',
      // every checkpoint an object, so this covers the object path and its outbox cleanup
      SVC_OBJECTS__INLINE_CHECKPOINT_MAX_BYTES: '0',
      SVC_OBJECTS__ACCESS_KEY_ID: 'S3RVER',
      SVC_OBJECTS__SECRET_ACCESS_KEY: 'S3RVER',
      // The outbox is delivered by this test's own sweep only: the scheduled deliver_outbox
      // (every control.scan_seconds, 5 s by default) could clean the replaced checkpoints up
      // before the test sees them (it did once in CI, on a loaded machine).
      SVC_CONTROL__SCAN_SECONDS: '3600',
    },
  });
});
test.after(async () => {
  await f?.stop();
  await s3?.dispose();
});

test('a run with the S3 object store commits checkpoints and display pages there, and its checkpoints are cleaned up through the outbox once it ends', async () => {
  const run = await waitForRun(f, (await send(f, 'to s3')).body.run.id);
  assert.is(run.status, 'completed', JSON.stringify(run.failure));
  const objects = f.service.services.objects;
  const keys = async () => (await objects.list(`runs/${run.id}/`)).keys;
  await until(keys, (k) => k.some((key) => key.includes('/pages/')));
  const items = (await f.client.get(`/api/v1/runs/${run.id}/items?after=0&limit=500`)).body.items as Array<{ ordinal: number; kind: string }>;
  assert.is(items.length, 1 + CALLS * 2 + 1);
  assert.equal(items.map((i) => i.ordinal), items.map((_, i) => i + 1));
  // An ended run keeps no checkpoint: its last step stored none and released the one before.
  const [row] = await query<{ checkpoint_key: string | null }>(f.db.url, 'select checkpoint_key from runs where id = $1', [run.id]);
  assert.is(row!.checkpoint_key, null);
  const checkpointsBefore = (await keys()).filter((k) => k.includes('/checkpoints/'));
  assert.ok(checkpointsBefore.length >= 1, 'the steps\' checkpoints were objects in S3, still there before the outbox runs');
  await runSweep(createJobContext(f.service.services), 'deliver_outbox');
  const checkpointsAfter = (await keys()).filter((k) => k.includes('/checkpoints/'));
  assert.equal(checkpointsAfter, [], 'every checkpoint was released through the outbox');
});

test.run();
