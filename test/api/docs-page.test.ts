import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestService, type TestService } from '../support/service.js';

const test = suite('api/docs-page');
let db: TestDatabase;
let service: TestService;

// Debian's chromium package (`apt-get install -y chromium`); .ci/run installs it.
const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

test.before(async () => {
  db = await createTestDatabase('docs_page');
  service = await startTestService({ databaseUrl: db.url });
});

test.after(async () => {
  await service?.stop();
  await db?.drop();
});

/** The URLs of the page's scripts, style sheets and icons. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!.replace(/&#38;/g, '&'));
}

/** Loads a page in headless Chromium with no route to any other host; returns DOM and log. */
function renderInChromium(url: string): Promise<{ dom: string; log: string; code: number | null }> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const args = [
    '--headless',
    '--no-sandbox', // the tests run as root
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    // No network: every host name but the service's own address fails to resolve.
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    // Console messages (CSP violations, uncaught errors) go to stderr as INFO:CONSOLE lines.
    '--enable-logging=stderr',
    '--v=0',
    // Let the page's scripts run and its fetch of the document finish before the DOM is taken.
    '--virtual-time-budget=10000',
    '--dump-dom',
    url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let dom = '';
    let log = '';
    child.stdout.on('data', (d: Buffer) => (dom += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (log += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      resolve({ dom, log, code });
    });
  });
}

test('GET /api/v1/docs is an HTML page with a strict CSP and no inline script', async () => {
  const response = await fetch(`${service.url}/api/v1/docs`);
  assert.is(response.status, 200);
  assert.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = response.headers.get('content-security-policy') ?? '';
  assert.match(csp, /(^|; )default-src 'self'(;|$)/);
  assert.match(csp, /(^|; )script-src 'self'(;|$)/);
  assert.not.match(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.is(response.headers.get('x-content-type-options'), 'nosniff');
  assert.ok(response.headers.get('x-request-id'));
  const html = await response.text();
  // Every script element loads a file; none carries code (the CSP would block it anyway).
  for (const script of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) assert.match(script, /^<script src="[^"]+"><\/script>$/);
  for (const url of assetUrls(html)) assert.ok(url.startsWith('/api/v1/'), `${url} is served by this process`);
});

test('the page\'s assets are served with their content types and a long cache lifetime', async () => {
  const html = await (await fetch(`${service.url}/api/v1/docs`)).text();
  const urls = assetUrls(html);
  const expected: Array<[RegExp, string]> = [
    [/swagger-ui-bundle\.js/, 'text/javascript; charset=utf-8'],
    [/init\.js/, 'text/javascript; charset=utf-8'],
    [/swagger-ui\.css/, 'text/css; charset=utf-8'],
    [/favicon-32x32\.png/, 'image/png'],
  ];
  for (const [pattern, type] of expected) {
    const url = urls.find((u) => pattern.test(u));
    assert.ok(url, `the page links ${pattern}`);
    const response = await fetch(`${service.url}${url}`);
    assert.is(response.status, 200, url);
    assert.is(response.headers.get('content-type'), type, url);
    assert.match(response.headers.get('cache-control') ?? '', /max-age=31536000/);
    assert.ok((await response.arrayBuffer()).byteLength > 0);
  }
  const init = await (await fetch(`${service.url}${urls.find((u) => /init\.js/.test(u))}`)).text();
  assert.match(init, /url: "\/api\/v1\/openapi\.json"/);
});

test('only allow-listed files are served: others are 404, traversal is refused', async () => {
  for (const name of ['index.html', 'swagger-ui-bundle.js.map', 'package.json', 'swagger-initializer.js']) {
    const response = await fetch(`${service.url}/api/v1/docs/assets/${name}`);
    assert.is(response.status, 404, name);
    assert.is(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
  }
  for (const path of ['..%2Fpackage.json', '..%2F..%2Fpackage.json']) {
    const response = await fetch(`${service.url}/api/v1/docs/assets/${path}`);
    assert.ok(response.status === 400 || response.status === 404, `${path}: ${response.status}`);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  }
});

test('the page renders the operations in headless Chromium with no network', async () => {
  if (!existsSync(CHROMIUM)) assert.unreachable(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  const { dom, log, code } = await renderInChromium(`${service.url}/api/v1/docs`);
  assert.is(code, 0, `chromium exited with ${code}:\n${log.slice(-2000)}`);
  // Swagger UI rendered the document: one operation block per operation of the document, with
  // its method, path and operationId, all in the DOM without scrolling. Swagger UI 5.33+
  // virtualizes the list from 150 entries (tags plus operations; the document has more) and
  // then keeps only those near the viewport in the DOM: the page's init script puts the full
  // list back (see docsInitScript), which this checks.
  assert.match(dom, /class="swagger-ui"/);
  const doc = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as {
    tags: Array<{ name: string }>;
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const documented = Object.entries(doc.paths)
    .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m} ${path} ${item[m]!.operationId}`))
    .sort();
  const rendered = dom
    .split(/<div class="opblock opblock-(?=[a-z]+[" ])/)
    .slice(1)
    .map((block) => {
      const method = /^[a-z]+/.exec(block)?.[0];
      const path = /class="opblock-summary-path" data-path="([^"]*)"/.exec(block)?.[1];
      const operationId = /class="opblock-summary-operation-id">([^<]*)</.exec(block)?.[1];
      return `${method} ${path} ${operationId}`;
    })
    .sort();
  assert.ok(documented.length > 100, `${documented.length} operations in the document`);
  assert.equal(rendered, documented, 'every operation of the document is rendered');
  for (const { name } of doc.tags) assert.match(dom, new RegExp(`<h3 class="opblock-tag[^"]*" id="operations-tag-${name}" data-tag="${name}"`), `tag ${name}`);
  assert.not.match(dom, /operations-virtual/, 'the operation list is not virtualized');
  assert.match(dom, /svc-service API/);
  assert.not.match(dom, /errors-wrapper/, 'Swagger UI reports no errors in the document');
  const consoleLines = log.split('\n').filter((line) => line.includes(':CONSOLE'));
  assert.equal(consoleLines, [], 'no console messages (CSP violations, uncaught errors, failed loads)');
});

test.run();
