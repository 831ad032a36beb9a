// Skill packages inside environments (TOOLS.md "Skills in runs": with an environment, the
// packages are also placed under /skills/<name>/), end to end through the API: with the
// `local` type for real (bubblewrap), a model that runs `cat /skills/<name>/SKILL.md` and the
// package's script gets their output; the placement is recorded once per environment and
// revision (a thread's second run uploads nothing); a lazy environment gets the packages at
// its first call; and the `modal` type gets them through Modal's filesystem API (local Modal
// gRPC server).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelScript, RecordedRequest } from '../../../bench/model-server.js';
import { query } from '../../support/database.js';
import { send, startRunFixture, waitForRun, type RunFixture } from '../../support/run-fixture.js';
import { MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, startFakeModal, type FakeModal } from '../../support/vendors/modal.js';

const test = suite('actors/run-engine/environment-skills');
let f: RunFixture;
let modal: FakeModal;
let localTemplate: string;
let skillId: string;
let revisionId: string;
const scripts = new Map<string, ModelScript[]>();
const requests: RecordedRequest[] = [];

const SKILL_MD = '---\nname: pdf-tools\ndescription: Works with PDF files.\n---\n# PDF tools\nRun scripts/hello.sh first.\n';
const HELLO_SH = 'echo "hello from the skill script"\n';
const call = (id: string, name: string, args: Record<string, unknown>): ModelScript => ({ type: 'tool_calls', calls: [{ id, name, arguments: JSON.stringify(args) }] });
const newThread = async (): Promise<string> => (await f.client.post(`/api/v1/sessions/${f.sessionId}/threads`, {})).body.id;

async function agentWith(templateId: string, config: Record<string, unknown> = {}): Promise<string> {
  const agent = await f.client.post('/api/v1/agents', {
    name: `skills-${Math.random().toString(36).slice(2)}`,
    config: { model: 'fast', default_environment_template_id: templateId, toolsets: { environment: { enabled: true } }, skills: [{ skill_id: skillId, revision_id: revisionId }], ...config },
  });
  assert.is(agent.status, 201, JSON.stringify(agent.body));
  return agent.body.id;
}

async function run(key: string, agentId: string, script: ModelScript[], threadId?: string): Promise<any> {
  scripts.set(key, script);
  const posted = await send(f, key, { agent_id: agentId }, threadId ?? (await newThread()));
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  return waitForRun(f, posted.body.run.id, undefined, 60_000);
}

async function toolResults(runId: string): Promise<any[]> {
  const page = await f.client.get(`/api/v1/runs/${runId}/items?limit=500`);
  return page.body.items.filter((i: { kind: string }) => i.kind === 'tool_result').map((i: { content: unknown }) => i.content);
}

const placedRows = async (environmentId: string) =>
  query<{ skill_id: string; revision_id: string; name: string; placed_at: Date }>(f.db.url, 'select skill_id, revision_id, name, placed_at from environment_skill_packages where environment_id = $1', [environmentId]);

test.before(async () => {
  modal = await startFakeModal();
  f = await startRunFixture({
    env: { SVC_ENVIRONMENTS__ENABLE_LOCAL: 'true' },
    allowedHttpOrigins: [modal.origin],
    script: (request) => {
      requests.push(request);
      const messages = request.body?.messages as Array<{ role: string; content: unknown }>;
      for (const message of messages.filter((m) => m.role === 'user').reverse()) {
        const queue = [...scripts.entries()].find(([k]) => JSON.stringify(message.content).includes(k))?.[1];
        if (queue) return queue.shift();
      }
      return undefined;
    },
  });
  const provider = await f.client.post('/api/v1/environment-providers', { type: 'local', name: 'dev' });
  assert.is(provider.status, 201, JSON.stringify(provider.body));
  const template = await f.client.post('/api/v1/environment-templates', { name: 'sandbox', provider_id: provider.body.id });
  assert.is(template.status, 201, JSON.stringify(template.body));
  localTemplate = template.body.id;
  const skill = await f.client.post('/api/v1/skills', { name: 'PDF helpers', description: 'head description', files: { 'SKILL.md': SKILL_MD, 'scripts/hello.sh': HELLO_SH } });
  assert.is(skill.status, 201, JSON.stringify(skill.body));
  skillId = skill.body.id;
  revisionId = skill.body.default_revision_id;
});
test.after(async () => {
  await f?.stop();
  await modal?.close();
});

test('local: the pinned package is under /skills/<name>/ for the shell; placed once per environment and revision', async () => {
  const agentId = await agentWith(localTemplate);
  const threadId = await newThread();
  const first = await run('skills-local-1', agentId, [
    call('c1', 'shell', { command: 'cat /skills/pdf-tools/SKILL.md && sh /skills/pdf-tools/scripts/hello.sh' }),
    call('c2', 'read_file', { path: '/skills/pdf-tools/scripts/hello.sh' }),
    call('c3', 'shell', { command: 'echo changed > /skills/pdf-tools/SKILL.md' }),
    { type: 'text', text: 'Read it.' },
  ], threadId);
  assert.is(first.status, 'completed', JSON.stringify(first.failure));
  const [shell, read, tamper] = await toolResults(first.id);
  assert.is(shell.output.exit_code, 0, JSON.stringify(shell.output));
  assert.is(shell.output.stdout, `${SKILL_MD}hello from the skill script\n`);
  assert.is(read.output.content, HELLO_SH);
  assert.is.not(tamper.output.exit_code, 0, 'the packages are read-only for commands');
  const system = JSON.stringify(requests.find((r) => JSON.stringify(r.body.messages).includes('skills-local-1'))!.body.messages[0]);
  assert.match(system, /\/skills\/pdf-tools\//, 'the prompt says where the package is');

  const environmentId = first.environment_mounts[0].environment_id;
  const placed = await placedRows(environmentId);
  assert.equal(placed.map((p) => [p.skill_id, p.revision_id, p.name]), [[skillId, revisionId, 'pdf-tools']]);

  const second = await run('skills-local-2', agentId, [call('c4', 'shell', { command: 'cat /skills/pdf-tools/SKILL.md' }), { type: 'text', text: 'Again.' }], threadId);
  assert.is(second.status, 'completed', JSON.stringify(second.failure));
  assert.is(second.environment_mounts[0].environment_id, environmentId, 'the thread\'s environment is reused');
  assert.is((await toolResults(second.id))[0].output.stdout, SKILL_MD);
  const again = await placedRows(environmentId);
  assert.is(again[0]!.placed_at.getTime(), placed[0]!.placed_at.getTime(), 'the same revision is not placed again');
});

test('local: a thread moving to another revision of the skill gets that revision alone (files it dropped are gone)', async () => {
  const threadId = await newThread();
  const first = await run('skills-rev-1', await agentWith(localTemplate), [call('c1', 'shell', { command: 'ls /skills/pdf-tools/scripts' }), { type: 'text', text: 'One.' }], threadId);
  assert.is(first.status, 'completed', JSON.stringify(first.failure));
  assert.is((await toolResults(first.id))[0].output.stdout, 'hello.sh\n');
  const head = await f.client.get(`/api/v1/skills/${skillId}`);
  const skillMd2 = SKILL_MD.replace('Run scripts/hello.sh first.', 'No scripts any more.');
  const two = await f.client.post(`/api/v1/skills/${skillId}/revisions`, { files: { 'SKILL.md': skillMd2 }, make_default: false }, { 'if-match': head.headers.get('etag')! });
  assert.is(two.status, 201, JSON.stringify(two.body));
  const agent2 = await f.client.post('/api/v1/agents', {
    name: `skills-rev2-${Math.random().toString(36).slice(2)}`,
    config: { model: 'fast', default_environment_template_id: localTemplate, toolsets: { environment: { enabled: true } }, skills: [{ skill_id: skillId, revision_id: two.body.id }] },
  });
  assert.is(agent2.status, 201, JSON.stringify(agent2.body));
  const second = await run('skills-rev-2', agent2.body.id, [call('c2', 'shell', { command: 'cat /skills/pdf-tools/SKILL.md; ls /skills/pdf-tools' }), { type: 'text', text: 'Two.' }], threadId);
  assert.is(second.status, 'completed', JSON.stringify(second.failure));
  assert.is(second.environment_mounts[0].environment_id, first.environment_mounts[0].environment_id, 'the thread\'s environment is reused');
  assert.is((await toolResults(second.id))[0].output.stdout, `${skillMd2}SKILL.md\n`);
  const placed = await placedRows(second.environment_mounts[0].environment_id);
  assert.equal(placed.map((p) => [p.revision_id, p.name]), [[two.body.id, 'pdf-tools']]);
});

test('local with lazy_environment: the packages are placed when the first environment call creates the environment', async () => {
  const agentId = await agentWith(localTemplate, { lazy_environment: true });
  const done = await run('skills-lazy', agentId, [call('c1', 'shell', { command: 'ls /skills/pdf-tools /skills/pdf-tools/scripts' }), { type: 'text', text: 'Listed.' }]);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  const [listed] = await toolResults(done.id);
  assert.is(listed.output.stdout, '/skills/pdf-tools:\nSKILL.md\nscripts\n\n/skills/pdf-tools/scripts:\nhello.sh\n');
  assert.is((await placedRows(done.environment_mounts[0].environment_id)).length, 1);
});

test('modal: the package is uploaded through ContainerFilesystemExec and the shell reads it in the sandbox', async () => {
  const provider = await f.client.post('/api/v1/environment-providers', { type: 'modal', name: 'modal', config: { base_url: modal.url }, credential: { token_id: MODAL_TOKEN_ID, token_secret: MODAL_TOKEN_SECRET } });
  assert.is(provider.status, 201, JSON.stringify(provider.body));
  const template = await f.client.post('/api/v1/environment-templates', { name: 'modal-py', provider_id: provider.body.id, config: { image: 'python:3.12' } });
  assert.is(template.status, 201, JSON.stringify(template.body));
  // The sandbox's shell, as far as this test needs it: cat of a file.
  modal.onCommand = (command, _cwd, sandbox) => {
    const cat = /^cat (\S+)$/.exec(command);
    const content = cat ? sandbox.files.get(cat[1]!) : undefined;
    return content ? { stdout: content.toString('utf8'), exit: 0 } : { stderr: `${command}: no such file\n`, exit: 1 };
  };
  const agentId = await agentWith(template.body.id);
  const done = await run('skills-modal', agentId, [call('c1', 'shell', { command: 'cat /skills/pdf-tools/SKILL.md' }), { type: 'text', text: 'Read it.' }]);
  assert.is(done.status, 'completed', JSON.stringify(done.failure));
  const [shell] = await toolResults(done.id);
  assert.equal([shell.output.exit_code, shell.output.stdout], [0, SKILL_MD]);
  const opened = modal.calls.filter((c) => c.method === 'ContainerFilesystemExec' && c.request.file_open_request).map((c) => [c.request.file_open_request.path, c.request.file_open_request.mode]);
  assert.equal(opened, [['/skills/pdf-tools/SKILL.md', 'wb'], ['/skills/pdf-tools/scripts/hello.sh', 'wb']]);
  const env = (await f.client.get(`/api/v1/environments/${done.environment_mounts[0].environment_id}`)).body;
  assert.is(modal.sandboxes.get(env.vendor_id)!.sandbox.files.get('/skills/pdf-tools/scripts/hello.sh')!.toString(), HELLO_SH);
  assert.equal((await placedRows(env.id)).map((p) => p.name), ['pdf-tools']);

  // Another revision on the same thread: the older folder is removed with rm -rf in the sandbox first.
  const head = await f.client.get(`/api/v1/skills/${skillId}`);
  const two = await f.client.post(`/api/v1/skills/${skillId}/revisions`, { files: { 'SKILL.md': '---\nname: pdf-tools\ndescription: d\n---\nmodal two\n' }, make_default: false }, { 'if-match': head.headers.get('etag')! });
  assert.is(two.status, 201, JSON.stringify(two.body));
  const commands: string[] = [];
  modal.onCommand = (command, _cwd, sandbox) => {
    commands.push(command);
    const rm = /^rm -rf -- '([^']+)'$/.exec(command);
    if (rm) for (const path of [...sandbox.files.keys()]) if (path.startsWith(`${rm[1]}/`)) sandbox.files.delete(path);
    return { exit: 0 };
  };
  const agent2 = await f.client.post('/api/v1/agents', {
    name: 'skills-modal-2',
    config: { model: 'fast', default_environment_template_id: template.body.id, toolsets: { environment: { enabled: true } }, skills: [{ skill_id: skillId, revision_id: two.body.id }] },
  });
  const again = await run('skills-modal-2', agent2.body.id, [{ type: 'text', text: 'Nothing to do.' }], done.thread_id);
  assert.is(again.status, 'completed', JSON.stringify(again.failure));
  assert.ok(commands.includes(`rm -rf -- '/skills/pdf-tools'`), JSON.stringify(commands));
  const files = modal.sandboxes.get(env.vendor_id)!.sandbox.files;
  assert.is(files.has('/skills/pdf-tools/scripts/hello.sh'), false, 'the dropped file is gone');
  assert.match(files.get('/skills/pdf-tools/SKILL.md')!.toString(), /modal two/);
});

test.run();
