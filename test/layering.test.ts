import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

// The architecture's dependency rules (DESIGN.md): runtime/ imports no project folder;
// actors/ imports only runtime/; api/ and jobs/ never import each other; a folder is entered
// through its index.ts; and no module import cycle exists.
const test = suite('layering');
const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const TOP = ['runtime', 'actors', 'jobs', 'api'] as const;
const ALLOWED: Record<(typeof TOP)[number], string[]> = { runtime: ['runtime'], actors: ['actors', 'runtime'], jobs: ['jobs', 'actors', 'runtime'], api: ['api', 'actors', 'runtime'] };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
const edges = new Map<string, string[]>();
for (const top of TOP) {
  for (const file of sources(join(ROOT, top))) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const spec = (match[1] ?? match[2])!;
      targets.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
    edges.set(file, targets);
  }
}
const rel = (p: string) => relative(ROOT, p);

test('folders import only in the allowed direction', () => {
  const bad: string[] = [];
  for (const [file, targets] of edges) {
    const from = rel(file).split('/')[0] as (typeof TOP)[number];
    for (const target of targets) {
      const to = rel(target).split('/')[0]!;
      if (!ALLOWED[from].includes(to)) bad.push(`${rel(file)} -> ${rel(target)}`);
    }
  }
  assert.equal(bad, []);
});

test('another folder is entered only through its index.ts', () => {
  const bad: string[] = [];
  for (const [file, targets] of edges) {
    for (const target of targets) {
      const fromDir = dirname(file);
      const toDir = dirname(target);
      // the same folder, or a module of an enclosing folder (a subfolder belongs to it), is fine
      if (toDir === fromDir || fromDir.startsWith(`${toDir}/`)) continue;
      if (!target.endsWith('/index.ts')) bad.push(`${rel(file)} -> ${rel(target)}`);
    }
  }
  assert.equal(bad, []);
});

test('there is no import cycle between modules', () => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, stack: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...stack.slice(stack.indexOf(file)), file].map(rel).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of edges.get(file) ?? []) visit(target, [...stack, file]);
    state.set(file, 'done');
  };
  for (const file of edges.keys()) visit(file, []);
  assert.equal(cycles.slice(0, 5), []);
});

test.run();
