import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onRequestScript, startModelServer, type ModelScript, type ModelServer, type RecordedRequest } from '../../../bench/model-server.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { login, seedOrganization, type Client } from '../../support/identity.js';
import { until } from '../../support/run-fixture.js';
import { startTestService, type TestService } from '../../support/service.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// The console in the real Chromium, driven by playwright-core: one walk from an empty
// workspace to a conversation, as an operator would do it. Screenshots of each main view go to
// a scratch folder, or to docs/console/ with SVC_TEST_SCREENSHOTS=docs (how the README's are made).
const test = suite('api/console/console-walk');
const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

let db: TestDatabase;
let service: TestService;
let model: ModelServer;
let admin: Client;
let hooks: Server;
let hooksOrigin: string;
let hookCalls = 0;

test.before(async () => {
  // Words arrive 30 ms apart, so a reply visibly streams.
  // The dev model's conventions, plus one scripted vendor failure for a message saying so.
  const script = (request: RecordedRequest, index: number): ModelScript | undefined =>
    JSON.stringify(request.body?.input ?? request.body?.messages ?? '').includes('please fail') ? { type: 'http_error', status: 400, message: 'the scripted vendor refuses' } : onRequestScript(request);
  model = await startModelServer({ token_delay_ms: 30, model_ids: ['dev-model'], script });
  hooks = createServer((_req, res) => {
    hookCalls++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  hooksOrigin = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  db = await createTestDatabase('walk');
  service = await startTestService({ databaseUrl: db.url, env: { SVC_PROVIDERS__ALLOWED_HTTP_ORIGINS: JSON.stringify([model.origin, hooksOrigin]), SVC_WORKER__POLL_SECONDS: '1', SVC_CONTROL__SCAN_SECONDS: '1', SVC_AUTH__RATE_LIMIT_PER_MINUTE: '0' } });
  const seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
});

test.after(async () => {
  await service?.stop();
  await model?.close();
  hooks?.close();
  await db?.drop();
});

async function launch(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
}

test('an operator sets up a provider, model and agent, chats with streaming, approves a call, and finds the run after a reload', async () => {
  if (!existsSync(CHROMIUM)) assert.unreachable(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  const shots = process.env.SVC_TEST_SCREENSHOTS === 'docs' ? join(ROOT, 'docs/console') : mkdtempSync(join(tmpdir(), 'svc-shots-'));
  mkdirSync(shots, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  // The page is loaded through a proxy the test can cut, to drop its stream connection.
  const proxy: TcpProxy = await startTcpProxy('127.0.0.1', Number(new URL(service.url).port));
  const origin = `http://127.0.0.1:${proxy.port}`;
  const context = await launch(profile);
  const problems: string[] = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/401 \(Unauthorized\)|ERR_CONNECTION|Failed to load resource|network error/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    const shot = async (name: string) => {
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
    };

    await page.goto(`${origin}/`);
    await page.getByLabel('Email').fill('admin@example.com');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#error:not([hidden])').waitFor();
    assert.match(await page.locator('#error-text').textContent() ?? '', /wrong email or password/);
    assert.match(await page.locator('#error-request').textContent() ?? '', /^request_id \S+/);
    await page.getByLabel('Password').fill('admin-password');
    await page.keyboard.press('Enter');
    await page.locator('#nav:not([hidden])').waitFor();
    // Page-side code is given as text: this file is compiled without the DOM's types.
    const stored = await page.evaluate<{ token: string; href: string; cookie: string; local: number }>(`({ ...JSON.parse(sessionStorage.getItem('svc-console.session') ?? '{}'), href: location.href, cookie: document.cookie, local: localStorage.length })`);
    assert.match(stored.token, /^svs_/);
    assert.ok(!stored.href.includes('svs_') && stored.cookie === '' && stored.local === 0, 'the token is kept in sessionStorage only');

    // Providers: create one for the local model, test it, discover its models, make one a model.
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByLabel('Name', { exact: true }).fill('dev');
    await page.getByLabel('Base URL').fill(model.url);
    await page.getByLabel('API key').fill('sk-…');
    await page.getByRole('button', { name: 'Create provider' }).click();
    // A key that cannot travel in an HTTP header is refused at its field.
    await page.locator('#f-provider-api_key[aria-invalid="true"]').waitFor();
    assert.match(await page.locator('#f-provider-api_key-msg').textContent() ?? '', /body\.credential\.api_key: .*HTTP header/);
    await page.getByLabel('API key').fill('dev');
    await page.getByRole('button', { name: 'Create provider' }).click();
    await page.locator('#providers td', { hasText: model.url }).waitFor();
    await page.locator('[data-test]').first().click();
    await page.locator('[data-test-result]', { hasText: 'succeeded' }).waitFor();
    await page.locator('[data-discover]').first().click();
    await page.locator('[data-slug="dev-model"]').fill('dev');
    await shot('providers');
    await page.locator('[data-create-model="dev-model"]').click();
    await page.waitForURL(/#\/models$/);
    await page.locator('#models td', { hasText: 'dev-model' }).waitFor();
    await shot('models');

    // Agents: a configuration error is shown at the field, then the agent is created and published again.
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByLabel('Name', { exact: true }).fill('helper');
    await page.getByLabel('Configuration (JSON)').fill('{"model": "dev", "instructions": "Be brief.", "toolsets": {"nope": {"enabled": true}}}');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.locator('#f-agent-config[aria-invalid="true"]').waitFor();
    assert.match(await page.locator('#f-agent-config-msg').textContent() ?? '', /^body\.config\.toolsets/);
    await page.getByLabel('Configuration (JSON)').fill('{"model": "dev", "instructions": "Be brief.", "toolsets": {"utilities": {"enabled": true, "tools": {"echo": {"permission": "ask"}}}}}');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.locator('#agent-title', { hasText: 'helper' }).waitFor();
    await page.locator('#revisions td', { hasText: /^1$/ }).waitFor();
    const config = page.locator('#f-revision-config');
    const published = JSON.parse(await config.inputValue()) as Record<string, unknown>;
    await config.fill(JSON.stringify({ ...published, instructions: 'Be very brief.', user_questions: true }, null, 2));
    await page.getByLabel('Note').fill('shorter');
    await page.getByRole('button', { name: 'Publish revision' }).click();
    await page.locator('#revisions td', { hasText: 'shorter' }).waitFor();
    assert.is(await page.locator('#revisions tbody tr').count(), 2);
    assert.match((await page.locator('#revisions code').first().getAttribute('title')) ?? '', /^[0-9a-f]{64}$/);
    await shot('agent');

    // Chat: the reply streams in word by word; the badge follows the run to completed.
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.locator('#agent option', { hasText: 'helper' }).waitFor({ state: 'attached' });
    await page.evaluate(`window.seen = []; new MutationObserver(() => { const t = document.querySelector('.item.text_message .text'); if (t && t.textContent) window.seen.push(t.textContent); }).observe(document.getElementById('items'), { subtree: true, childList: true, characterData: true })`);
    await page.getByLabel('Message', { exact: true }).fill('Hello there, console');
    await page.getByRole('button', { name: 'Send' }).click();
    const first = 'You said: Hello there, console';
    await page.locator('.item.text_message:not(.in_progress) .text', { hasText: first }).waitFor();
    await page.locator('#run-status[data-status="completed"]').waitFor();
    const seen = await page.evaluate<string[]>('window.seen');
    assert.ok(seen.some((text) => text.length > 0 && text.length < first.length && first.startsWith(text)), `partial text was shown: ${JSON.stringify(seen)}`);
    const threadId = (await page.locator('#thread-title').getAttribute('data-thread'))!;
    assert.match(threadId, /^thr_/);

    // The stream drops; another client sends meanwhile; the page catches up exactly once.
    proxy.cut();
    await page.locator('#stream-state', { hasText: /disconnected|reconnecting/ }).waitFor();
    const agentId = await page.locator('#agent').inputValue();
    const sent = await admin.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'Again <b>not markup</b>' }] } }, { 'idempotency-key': `walk-${Date.now()}` });
    assert.is(sent.status, 201, JSON.stringify(sent.body));
    proxy.restore();
    await page.locator('.item.text_message:not(.in_progress) .text', { hasText: 'You said: Again <b>not markup</b>' }).waitFor();
    assert.is(await page.locator('.item.text_message').count(), 2);
    assert.is(await page.locator('.item b').count(), 0, 'text is never parsed as markup');
    await page.locator('#stream-state', { hasText: 'stream: live' }).waitFor();

    // An image sent to the thread is drawn in its message, from the asset's bytes (blob: URL).
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const uploaded = await fetch(`${service.url}/api/v1/assets?name=dot.png`, { method: 'POST', headers: { ...admin.headers, 'content-type': 'image/png' }, body: png });
    assert.is(uploaded.status, 201);
    const asset = (await uploaded.json()) as { id: string };
    const devModel = await admin.get('/api/v1/models/dev');
    await admin.patch('/api/v1/models/dev', { characteristics: { capabilities: ['image_input'] } }, { 'if-match': devModel.headers.get('etag') ?? '' });
    const withImage = await admin.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'See this' }, { type: 'image', asset_id: asset.id }] } }, { 'idempotency-key': `walk-image-${Date.now()}` });
    assert.is(withImage.status, 201, JSON.stringify(withImage.body));
    const image = page.locator('.item.user_message img.asset-image');
    await image.waitFor();
    await until(() => image.evaluate((img: unknown) => (img as { naturalWidth: number }).naturalWidth), (width) => width === 1);
    assert.match((await image.getAttribute('src')) ?? '', /^blob:/);
    await page.locator('.item.text_message .text', { hasText: 'You said: See this' }).waitFor();

    // A tool call waits for approval; approving resumes it in place (sent with Ctrl+Enter).
    await page.getByLabel('Message', { exact: true }).fill('call echo {"text":"approved text"}');
    await page.getByLabel('Message', { exact: true }).press('Control+Enter');
    await page.locator('#pending:not([hidden]) [data-tool-call-id] strong', { hasText: 'echo' }).waitFor();
    assert.match(await page.locator('#run-status').textContent() ?? '', /^waiting \(approval\)$/);
    await page.locator('.item.tool_call .text', { hasText: 'echo({"text":"approved text"})' }).waitFor();
    await shot('chat-approval');
    await page.locator('#pending [data-choice="approve"]').click();
    await page.getByRole('button', { name: 'Resume run' }).click();
    await page.locator('.item.text_message .text', { hasText: 'The tool answered:' }).waitFor();
    await page.locator('#run-status[data-status="completed"]').waitFor();
    assert.is(await page.locator('#pending').isHidden(), true);
    await page.locator('#run-facts dd', { hasText: /^resume of run_/ }).waitFor();
    await page.locator('#run-facts dt', { hasText: 'Usage' }).waitFor();
    await shot('chat');

    // Fork the resumed run into a new thread, which opens with its first reply.
    await page.getByLabel('First message of the fork').fill('Forked hello');
    await page.getByRole('button', { name: 'Fork' }).click();
    await page.waitForURL((url) => /#\/chat\/thr_/.test(url.hash) && !url.hash.includes(threadId));
    await page.locator('.item.text_message .text', { hasText: 'You said: Forked hello' }).waitFor();
    await page.locator('#run-facts dd', { hasText: /^fork of run_/ }).waitFor();

    // After a reload the session stays; the thread is in the list and its history loads.
    await page.reload();
    await page.getByRole('link', { name: 'Threads' }).click();
    const sessionLink = page.locator('#sessions a').first();
    await sessionLink.waitFor();
    await page.getByLabel('Filter sessions and threads').fill('no-such-thing');
    await page.locator('#sessions', { hasText: 'No sessions match.' }).waitFor();
    await page.getByLabel('Filter sessions and threads').fill('');
    await page.locator('#sessions a').first().click();
    await page.locator(`#threads a`, { hasText: threadId }).waitFor();
    await shot('threads');
    await page.locator('#threads a', { hasText: threadId }).click();
    await page.locator('.item.text_message .text', { hasText: 'The tool answered:' }).waitFor();
    await page.locator('#run-status[data-status="completed"]').waitFor();
    // Older runs of the thread load on demand.
    // Two clicks in one go (an impatient user): one load, not two that would both step back a run.
    await page.locator('#older').evaluate((button: { click(): void }) => {
      button.click();
      button.click();
    });
    await page.locator('.item.user_message .text', { hasText: 'call echo' }).waitFor();
    const oldest = page.locator('.item.user_message .text', { hasText: 'Hello there, console' });
    // Each click (or scrolling to the top) loads one more page or run; the button hides at the start.
    for (let i = 0; i < 20 && (await oldest.count()) === 0; i++) await page.locator('#older').click({ timeout: 2000 }).catch(() => undefined);
    await oldest.waitFor();
    assert.equal(await page.locator('.item.user_message .text').allTextContents(), ['Hello there, console', 'Again <b>not markup</b>', 'See this', 'call echo {"text":"approved text"}'], 'every run of the thread, oldest first');

    // A run that fails shows its code and message.
    await page.getByLabel('Message', { exact: true }).fill('please fail');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#run-status[data-status="failed"]').waitFor();
    assert.match(await page.locator('#run-status').textContent() ?? '', /^failed: model_/);
    await page.locator('#run-facts dd', { hasText: /^model_\w+: .*scripted vendor refuses/ }).waitFor();
    await page.locator('.item.user_message .text', { hasText: 'please fail' }).waitFor();

    // A long reply (150 words, 30 ms apart) is cancelled from the run panel while it streams.
    await page.getByLabel('Message', { exact: true }).fill(Array.from({ length: 150 }, (_, i) => `word${i}`).join(' '));
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.item.text_message.in_progress').last().waitFor();
    await page.locator('#cancel-run').click();
    await page.locator('#run-status[data-status="cancelled"]').waitFor();

    // A question the model asks is answered in place, by picking one of its choices.
    await page.getByLabel('Message', { exact: true }).fill('call ask_user {"question":"Which colour?","choices":["red","blue"]}');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#pending:not([hidden]) [data-tool-call-id]', { hasText: 'Which colour?' }).waitFor();
    assert.match(await page.locator('#run-status').textContent() ?? '', /^waiting \(user_question\)$/);
    await page.locator('#pending').getByRole('button', { name: 'red' }).click();
    await page.locator('#pending').getByRole('button', { name: 'Send answer' }).click();
    await page.getByRole('button', { name: 'Resume run' }).click();
    await page.locator('.item.text_message .text', { hasText: /The tool answered: .*red/ }).waitFor();
    await page.locator('#run-status[data-status="completed"]').waitFor();

    // The other setup pages; providers of another kind take their configuration as JSON.
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByLabel('Provider kind').selectOption('web');
    await page.waitForURL(/#\/providers\/web$/);
    await page.locator('#f-provider-type').selectOption('tavily');
    await page.getByLabel('Name', { exact: true }).fill('search');
    await page.getByLabel('Credential (JSON)').fill('{"api_key": "tvly-test"}');
    await page.getByRole('button', { name: 'Create provider' }).click();
    await page.locator('#providers td', { hasText: 'tavily' }).waitFor();
    await page.getByRole('link', { name: 'Keys & members' }).click();
    await page.locator('#form-api-key').getByLabel('Name', { exact: true }).fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-secret .secret', { hasText: /^svk_/ }).waitFor();
    await page.locator('#members td', { hasText: 'admin@example.com' }).waitFor();
    await shot('access');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL').fill(`${hooksOrigin}/hook`);
    await page.getByLabel('Events').selectOption(['run.completed']);
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.locator('#webhook-secret .secret', { hasText: /^whsec_/ }).waitFor();
    // A completed run is delivered to the subscription; the delivery can be sent again.
    const hooked = await admin.post(`/api/v1/threads/${threadId}/inbox`, { agent_id: agentId, payload: { content: [{ type: 'text', text: 'for the webhook' }] } }, { 'idempotency-key': `walk-hook-${Date.now()}` });
    assert.is(hooked.status, 201, JSON.stringify(hooked.body));
    const delivered = page.locator('#deliveries td', { hasText: /^delivered$/ });
    await until(async () => {
      await page.getByRole('button', { name: 'Deliveries' }).click();
      return delivered.count();
    }, (n) => n > 0, 30_000);
    const before = hookCalls;
    await page.locator('#deliveries').getByRole('button', { name: 'Redeliver' }).first().click();
    await until(() => hookCalls, (n) => n > before, 30_000);
    await shot('webhooks');
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.locator('#form-skill').getByLabel('Name', { exact: true }).fill('notes');
    await page.locator('#f-skill-files').setInputFiles([{ name: 'SKILL.md', mimeType: 'text/markdown', buffer: Buffer.from('---\nname: notes\ndescription: Takes notes\n---\nWrite things down.\n') }]);
    await page.getByRole('button', { name: 'Create skill' }).click();
    await page.locator('#skills td', { hasText: /^notes$/ }).waitFor();
    await shot('skills');
    // Findings: one recorded through the API is reviewed and closed in the page.
    const runs = await admin.get(`/api/v1/runs?thread_id=${threadId}`);
    const firstRun = runs.body.items[0];
    const finding = await admin.post('/api/v1/findings', {
      agent_id: firstRun.agent_id, agent_revision_id: firstRun.agent_revision_id, category: 'inefficiency', title: 'Repeats the user',
      explanation: 'It echoes every message.', suggestion: 'Answer instead.', source_key: 'walk-1', evidence: [{ run_id: firstRun.id, trace_id: firstRun.id }],
    });
    assert.is(finding.status, 201, JSON.stringify(finding.body));
    await page.getByRole('link', { name: 'Findings' }).click();
    await page.getByRole('button', { name: 'Analyse recent runs' }).click();
    await page.locator('[data-analysis]').waitFor();
    await page.getByLabel('Assessment of Repeats the user').selectOption('confirmed');
    await until(async () => (await admin.get(`/api/v1/findings/${finding.body.id}`)).body.assessment, (a) => a === 'confirmed');
    await shot('findings');
    await page.locator('#findings tr', { hasText: 'Repeats the user' }).getByRole('button', { name: 'Close' }).click();
    await page.locator('#findings', { hasText: 'No findings.' }).waitFor();
    assert.is((await admin.get(`/api/v1/findings/${finding.body.id}`)).body.closed, true);

    // Keyboard: the skip link is the first stop and leads to the content.
    await page.reload();
    await page.locator('#form-analysis').waitFor();
    await page.keyboard.press('Tab');
    assert.is(await page.evaluate<string>('document.activeElement.textContent'), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate<string>('document.activeElement.id'), 'main');
    await page.keyboard.press('Tab');
    assert.ok(await page.evaluate<boolean>(`document.getElementById('page').contains(document.activeElement)`), 'the next stop is in the content');
    // Readable on a narrow window: nothing wider than the viewport but tables, which scroll.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.locator('#agent option').first().waitFor({ state: 'attached' });
    assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth + 1'), 'no horizontal page scroll at 390 px');
    await shot('chat-narrow');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#sign-in-view:not([hidden])').waitFor();
    // The logout request goes out after the page has dropped its session: wait for it to land.
    await until(async () => (await fetch(`${service.url}/api/v1/me`, { headers: { authorization: `Bearer ${stored.token}` } })).status, (status) => status === 401);
    assert.equal(problems, [], 'no CSP violation, uncaught error or console error');
  } catch (error) {
    // What the console's error banner said is usually the reason a step timed out.
    const page = context.pages()[0];
    const banner = page ? await page.locator('#error:not([hidden])').textContent({ timeout: 1000 }).catch(() => null) : null;
    if (banner) (error as Error).message += `\nconsole error banner: ${banner}`;
    throw error;
  } finally {
    await context.close();
    await proxy.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    if (process.env.SVC_TEST_SCREENSHOTS !== 'docs') rmSync(shots, { recursive: true, force: true });
  }
});

test.run();
