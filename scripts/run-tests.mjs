// Runs every compiled test file (dist/test/**/*.test.js) in its own Node process, a few at a
// time, and prints one closing line `N passed, N failed` (uvu prints totals per process in its
// own format; this translates them). A file that crashes or times out without printing totals
// counts as one failure. Arguments filter files by substring: `node scripts/run-tests.mjs kernel`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus } from 'node:os';

const ROOT = 'dist/test';
const FILE_TIMEOUT_MS = Number(process.env.SVC_TEST_FILE_TIMEOUT_MS ?? 240_000);
const PARALLEL = Number(process.env.SVC_TEST_PARALLEL ?? Math.max(2, cpus().length + 1));
const EXIT_GRACE_MS = Number(process.env.SVC_TEST_EXIT_GRACE_MS ?? 20_000);

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // uvu prints its totals (ending with Duration) once every suite of the file has run: the
    // verdict is known. A file still alive EXIT_GRACE_MS later holds handles nobody closes (a
    // `before` hook that failed half-way leaves its fixture's servers open, its `after` having
    // nothing to stop): killed then, not at the file timeout, and counted failed as before.
    let grace = null;
    const onData = (d) => {
      output += d;
      if (grace === null && /Duration:\s+[\d.]+/.test(output)) {
        grace = setTimeout(() => {
          output += `\n[run-tests] ${file} printed its totals but did not exit within ${EXIT_GRACE_MS} ms (open handles); killed\n`;
          child.kill('SIGKILL');
        }, EXIT_GRACE_MS);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => {
      output += `\n[run-tests] ${file} timed out after ${FILE_TIMEOUT_MS} ms; killed\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (grace !== null) clearTimeout(grace);
      const num = (label) => {
        const m = output.match(new RegExp(`${label}:\\s+(\\d+)`));
        return m ? Number(m[1]) : undefined;
      };
      const total = num('Total');
      const passed = num('Passed') ?? 0;
      const skipped = num('Skipped') ?? 0;
      let failed = total === undefined ? 1 : total - passed - skipped;
      if (code !== 0 && failed === 0) failed = 1; // crashed after printing totals, or leaked handles
      resolve({ file, code, output, passed, failed, skipped, ms: Date.now() - started });
    });
  });
}

const filters = process.argv.slice(2);
let files = [];
try {
  files = collect(ROOT).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
} catch {
  console.error(`no compiled tests under ${ROOT}: run npm run build first`);
}
const queue = [...files];
const results = [];
async function lane() {
  for (let file = queue.shift(); file; file = queue.shift()) {
    const r = await runFile(file);
    results.push(r);
    const status = r.failed > 0 ? 'FAIL' : 'ok  ';
    console.log(`${status} ${relative(ROOT, file)}  (${r.passed} passed, ${r.failed} failed, ${r.ms} ms)`);
    if (r.failed > 0 || process.env.SVC_TEST_VERBOSE) console.log(r.output.replace(/^/gm, '    | '));
  }
}
await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length || 1) }, lane));
const passed = results.reduce((a, r) => a + r.passed, 0);
const failed = results.reduce((a, r) => a + r.failed, 0) + (files.length === 0 ? 1 : 0);
const skipped = results.reduce((a, r) => a + r.skipped, 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
