// `node dist/bench/profile-summary.js <file.cpuprofile | dir> [top]`: the functions with the
// most self time in V8 CPU profiles (as written by `node --cpu-prof`, see service-harness.ts
// BENCH_SERVICE_CPU_PROF), plus self time grouped by package/folder, so a bench note can say
// where a service process spends its CPU. Reads local files only.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

interface Row {
  readonly key: string;
  ms: number;
}

/** Self time per node id from samples × time deltas (µs), which is exact where hitCount is not. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const out = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => out.set(id, (out.get(id) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0)));
  return out;
}

/** Where a frame lives: a node_modules package, a project folder, node: internals, or V8. */
function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1]) return pkg[1];
  if (url.startsWith('node:')) return 'node: internals';
  const project = /\/dist\/([^/]+)\/([^/]+)/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

function add(rows: Map<string, Row>, key: string, ms: number): void {
  const row = rows.get(key) ?? { key, ms: 0 };
  row.ms += ms;
  rows.set(key, row);
}

export function summarizeProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const functions = new Map<string, Row>();
  const areas = new Map<string, Row>();
  let total = 0;
  for (const [id, us] of selfTimes(profile)) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const ms = us / 1000;
    total += ms;
    const name = frame.functionName || '(anonymous)';
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}` : '';
    add(functions, `${name} ${where}`.trim(), ms);
    add(areas, areaOf(frame.url, name), ms);
  }
  const pct = (ms: number): string => `${((100 * ms) / Math.max(total, 1e-9)).toFixed(1).padStart(5)} %`;
  const list = (rows: Map<string, Row>): string[] =>
    [...rows.values()].sort((a, b) => b.ms - a.ms).slice(0, top).map((r) => `  ${pct(r.ms)}  ${r.ms.toFixed(0).padStart(7)} ms  ${r.key}`);
  const wall = (profile.endTime - profile.startTime) / 1000;
  return [`profiled ${wall.toFixed(0)} ms wall, ${total.toFixed(0)} ms sampled`, 'self time by function:', ...list(functions), 'self time by area:', ...list(areas)].join('\n');
}

function main(): void {
  const target = process.argv[2];
  const top = Number(process.argv[3] ?? 25);
  if (!target) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile | dir> [top]\n');
    process.exit(2);
  }
  const files = statSync(target).isDirectory()
    ? readdirSync(target, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f))
    : [target];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile; // I/O edge: V8's format
    process.stdout.write(`== ${file}\n${summarizeProfile(profile, top)}\n\n`);
  }
}

main();
