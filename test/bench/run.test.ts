import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkTargets, computeRatios } from '../../bench/report.js';
import { summarizeLatency, type Figures, type Scenario } from '../../bench/scenario.js';

const RUN_JS = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBench(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function positiveNumber(figures: Record<string, unknown> | undefined, key: string): void {
  const value = figures?.[key];
  assert.type(value, 'number', `${key} is a number`);
  assert.ok((value as number) > 0, `${key} > 0, got ${String(value)}`);
}

const test = suite('bench/run');

test('prints one JSON document with positive ceiling, machine-cost and codec figures, and writes --json-out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
  try {
    const out = join(dir, 'bench.json');
    const r = await runBench(['--seconds', '1', '--only', 'uws-hello,machine,checkpoint-codec', '--json-out', out]);
    assert.is(r.code, 0, r.stderr);
    // I/O edge: the document is parsed from the child's stdout.
    const doc = JSON.parse(r.stdout) as Record<string, any>;
    assert.equal(JSON.parse(readFileSync(out, 'utf8')), doc);
    assert.equal(Object.keys(doc).sort(), ['ceilings', 'finished_at', 'machine', 'machine_vs_reference', 'ratios', 'scenarios', 'settings', 'started_at', 'targets']);
    // The ceilings that ran are compared with the reference machine's; pg-commit did not run.
    for (const key of ['machine.syscall_ns', 'machine.page_fault_us', 'uws-hello.plain_requests_per_sec']) positiveNumber(doc.machine_vs_reference, key);
    assert.is(doc.machine_vs_reference['pg-commit.commits_per_sec'], null);
    positiveNumber(doc.machine, 'cpus');
    assert.type(doc.machine.node, 'string');
    assert.equal(Object.keys(doc.ceilings), ['uws-hello', 'machine']);
    for (const key of ['syscall_ns', 'thread_wake_roundtrip_us', 'page_fault_us']) positiveNumber(doc.ceilings.machine, key);
    assert.equal(Object.keys(doc.scenarios), ['checkpoint-codec']);
    for (const key of ['requests_per_sec', 'plain_requests_per_sec', 'elapsed_ms']) positiveNumber(doc.ceilings['uws-hello'], key);
    assert.is(doc.ceilings['uws-hello'].errors, 0);
    const codec = doc.scenarios['checkpoint-codec'];
    for (const key of ['msgpack_encode_us', 'msgpack_decode_us', 'json_encode_us', 'json_decode_us', 'msgpack_bytes']) positiveNumber(codec, key);
    assert.ok(codec.state_json_bytes >= 50 * 1024, 'the agent state is at least 50 KB of JSON');
    assert.is(codec.msgpack_records_round_trips, 'yes');
    positiveNumber(doc.ratios, 'checkpoint_json_vs_msgpack_encode');
    const target = doc.targets.find((t: { name: string }) => t.name === 'checkpoint_encode_50kb');
    assert.ok(target, 'the checkpoint target is reported');
    assert.type(target.met, 'boolean');
    assert.match(r.stderr, 'targets', 'the human table goes to stderr');
    assert.match(r.stderr, 'this machine ÷ reference', 'the table says how this machine compares with the reference run');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('refuses unknown scenario names and non-loopback URLs with exit code 2', async () => {
  const unknown = await runBench(['--only', 'no-such-scenario']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, 'known: uws-hello');
  const remote = await runBench(['--redis-url', 'redis://10.1.2.3:6379', '--only', 'redis-pubsub']);
  assert.is(remote.code, 2);
  assert.match(remote.stderr, 'only sends traffic to 127.0.0.1');
  assert.is(remote.stdout, '');
});

test('summarizeLatency reports nearest-rank p50 and p99', () => {
  const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100 ms, unsorted
  const s = summarizeLatency(samples);
  assert.is(s.samples, 100);
  assert.is(s.p50_ms, 50);
  assert.is(s.p99_ms, 99);
  assert.is(s.max_ms, 100);
  assert.is(s.mean_ms, 50.5);
});

test('a target can name a ratio (ratios.<name>); a missing side makes it null and unmet', () => {
  const scenario: Scenario = {
    name: 'api-read',
    kind: 'scenario',
    run: async () => ({}),
    ratios: [{ name: 'api_read_vs_uws', numerator: 'api-read.requests_per_sec', denominator: 'uws-hello.plain_requests_per_sec' }],
    targets: [{ name: 'api_read_vs_uws', figure: 'ratios.api_read_vs_uws', op: '>=', target: 0.5, unit: '×' }],
  };
  const results = new Map<string, Figures>([['api-read', { requests_per_sec: 600 }], ['uws-hello', { plain_requests_per_sec: 1000 }]]);
  const ratios = computeRatios([scenario], results);
  assert.equal(ratios, { api_read_vs_uws: 0.6 });
  assert.equal(checkTargets([scenario], results, ratios).map((t) => [t.value, t.met]), [[0.6, true]]);
  const alone = new Map<string, Figures>([['api-read', { requests_per_sec: 600 }]]);
  assert.equal(checkTargets([scenario], alone, computeRatios([scenario], alone)).map((t) => [t.value, t.met]), [[null, false]]);
});

test('the issue table is checked whatever ran: an absent scenario is "not run", a failed one "failed"', () => {
  const always = [
    { name: 'commits', figure: 'db-commits.commits_per_run', op: '<=' as const, target: 4, unit: '' },
    { name: 'kill', figure: 'crash-recovery.kill_to_running_elsewhere_p50_ms', op: '<=' as const, target: 1000, unit: 'ms' },
    { name: 'fanout', figure: 'stream-fanout.delta_p99_ms', op: '<=' as const, target: 50, unit: 'ms' },
    { name: 'read', figure: 'ratios.api_read_vs_uws', op: '>=' as const, target: 0.3, unit: '×' },
  ];
  const results = new Map<string, Figures>([['crash-recovery', { kill_to_running_elsewhere_p50_ms: 240 }], ['stream-fanout', { error: 'timed out' }]]);
  const checked = checkTargets([], results, {}, always);
  assert.equal(checked.map((t) => [t.name, t.value, t.met, t.status]), [
    ['commits', null, false, 'not run'],
    ['kill', 240, true, 'met'],
    ['fanout', null, false, 'failed'],
    ['read', null, false, 'not run'],
  ]);
});

test('npm run bench lists every target of the issue table, each with its status', async () => {
  const r = await runBench(['--seconds', '1', '--only', 'checkpoint-codec']);
  assert.is(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { targets: Array<{ name: string; status: string }> };
  for (const name of ['inbox_to_first_delta_p50', 'inbox_to_first_delta_32_clients_p50', 'cpu_ms_per_completed_run', 'db_commits_per_run', 'kill_to_running_elsewhere_p50', 'fanout_10000_ws_delta_p99']) {
    assert.is(doc.targets.find((t) => t.name === name)?.status, 'not run', name);
  }
  assert.match(r.stderr, /db_commits_per_run\s+— <= 4\s+NOT RUN/);
});

test.run();
