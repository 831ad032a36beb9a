// A steer NOTIFY can be handled before the run it names is hosted here: a run started on an idle
// thread does not read its pending steer entries at its start (AttemptRunner.begin), and a
// steer committed right after its input can be announced in the same turn of the event loop as
// that input's commit. The worker host keeps such NOTIFYs for a while (bounded) and asks the run
// to read its steer entries when it is hosted. White-box: the race itself cannot be timed from
// outside the process.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHANNEL_STEER, engineFor } from '../../../actors/index.js';
import { startRunFixture, type RunFixture } from '../../support/run-fixture.js';

const test = suite('actors/worker/early-steer');
let f: RunFixture;

test.before(async () => {
  f = await startRunFixture();
});
test.after(async () => {
  await f?.stop();
});

interface HostInternals {
  onNotify(channel: string, runId: string): void;
  earlySteers: Map<string, number>;
}

test('a steer NOTIFY for a run not hosted here is kept, bounded, for when it is', () => {
  const hosts = [...engineFor(f.service.services).localHosts] as unknown as HostInternals[];
  assert.is(hosts.length, 1);
  const host = hosts[0]!;
  host.onNotify(CHANNEL_STEER, 'run_not_yet_hosted');
  assert.ok(host.earlySteers.has('run_not_yet_hosted'), 'kept for the run');
  for (let i = 0; i < 1_500; i++) host.onNotify(CHANNEL_STEER, `run_elsewhere_${i}`);
  assert.ok(host.earlySteers.size <= 1_000, `bounded (${host.earlySteers.size})`);
  assert.not.ok(host.earlySteers.has('run_not_yet_hosted'), 'the oldest go first');
  host.earlySteers.clear();
});

test.run();
