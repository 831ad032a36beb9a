import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSkill, ifMatch, startAgentWorld, type AgentWorld } from '../agents/agent-test-support.js';
import { writeTar, type TarEntry } from './tar-writer.js';

const test = suite('api/skills/skill-packages');
let world: AgentWorld;

test.before(async () => {
  world = await startAgentWorld('skill_packages');
});
test.after(async () => {
  await world?.stop();
});

async function download(skillId: string, revisionId: string, path: string): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const response = await fetch(`${world.service.url}/api/v1/skills/${skillId}/revisions/${revisionId}/files/${encodeURIComponent(path)}`, { headers: world.client.headers });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
}

async function upload(skillId: string, archive: Buffer, headers: Record<string, string>, qs = ''): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${world.service.url}/api/v1/skills/${skillId}/revisions/upload${qs}`, { method: 'POST', headers: { ...world.client.headers, ...headers }, body: archive });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

test('a JSON file map round-trips byte for byte, text and base64 binary alike', async () => {
  const binary = randomBytes(3000);
  const files = { 'SKILL.md': '# Résumé skill\n✓ unicode\n', 'scripts/run.py': 'print("hi")\n', 'assets/blob.bin': { content_base64: binary.toString('base64') } };
  const { skill } = await createSkill(world.client, { files, labels: { kind: 'pkg' } });
  assert.match(skill.id, /^sk_/);
  const revision = await world.client.get(`/api/v1/skills/${skill.id}/revisions/${skill.default_revision_id}`);
  assert.is(revision.body.number, 1);
  assert.is(revision.body.file_count, 3);
  assert.match(revision.body.digest, /^[0-9a-f]{64}$/);
  const listed = await world.client.get(`/api/v1/skills/${skill.id}/revisions/${skill.default_revision_id}/files`);
  assert.equal(listed.body.items.map((f: any) => f.path), ['SKILL.md', 'assets/blob.bin', 'scripts/run.py']);
  assert.is(listed.body.items[1].size, 3000);
  const md = await download(skill.id, skill.default_revision_id, 'SKILL.md');
  assert.is(md.status, 200);
  assert.ok(md.bytes.equals(Buffer.from(files['SKILL.md'], 'utf8')));
  assert.is(md.headers.get('content-type'), 'application/octet-stream');
  const bin = await download(skill.id, skill.default_revision_id, 'assets/blob.bin');
  assert.ok(bin.bytes.equals(binary));
  assert.is((await download(skill.id, skill.default_revision_id, 'nope.txt')).status, 404);
});

test('a tar archive (plain and gzip, with a wrapping folder) round-trips byte for byte', async () => {
  const { skill, match } = await createSkill(world.client);
  const binary = randomBytes(70000);
  const longPath = `${'a'.repeat(60)}/${'b'.repeat(60)}/file.txt`;
  const entries: TarEntry[] = [
    { path: 'my-skill/', type: '5' },
    { path: 'my-skill/SKILL.md', bytes: Buffer.from('# From tar\n') },
    { path: 'my-skill/data/blob.bin', bytes: binary },
    { path: `my-skill/${longPath}`, bytes: Buffer.from('long') },
  ];
  const plain = await upload(skill.id, writeTar(entries), { 'content-type': 'application/x-tar', ...match }, '?note=from%20tar');
  assert.is(plain.status, 201, JSON.stringify(plain.body));
  assert.is(plain.body.number, 2);
  assert.is(plain.body.note, 'from tar');
  assert.is(plain.body.file_count, 3);
  assert.ok((await download(skill.id, plain.body.id, 'data/blob.bin')).bytes.equals(binary));
  assert.ok((await download(skill.id, plain.body.id, longPath)).bytes.equals(Buffer.from('long')));
  // the same package gzip'd is identical content: the default revision comes back, nothing new
  const gz = await upload(skill.id, writeTar(entries, { gzip: true }), { 'content-type': 'application/gzip', ...ifMatch(plain) });
  assert.is(gz.status, 201);
  assert.is(gz.body.id, plain.body.id);
  const changed = [...entries.slice(0, 2), { path: 'my-skill/data/blob.bin', bytes: Buffer.from('changed') }];
  const third = await upload(skill.id, writeTar(changed, { gzip: true }), { 'content-type': 'application/gzip', ...ifMatch(gz) });
  assert.is(third.status, 201);
  assert.is(third.body.number, 3);
  assert.ok((await download(skill.id, third.body.id, 'data/blob.bin')).bytes.equals(Buffer.from('changed')));
  // revision 2 still serves its own bytes
  assert.ok((await download(skill.id, plain.body.id, 'data/blob.bin')).bytes.equals(binary));
});

test('tar uploads refuse links, non-tar bodies and other content types', async () => {
  const { skill, match } = await createSkill(world.client);
  const link = await upload(skill.id, writeTar([{ path: 'SKILL.md', bytes: Buffer.from('x') }, { path: 'evil', type: '2', linkname: '/etc/passwd' }]), { 'content-type': 'application/x-tar', ...match });
  assert.is(link.status, 400);
  assert.match(link.body.error.message, /links/);
  const garbage = await upload(skill.id, randomBytes(2048), { 'content-type': 'application/x-tar', ...match });
  assert.is(garbage.status, 400);
  const wrongType = await upload(skill.id, writeTar([{ path: 'SKILL.md', bytes: Buffer.from('x') }]), { 'content-type': 'text/plain', ...match });
  assert.is(wrongType.status, 415);
  const traversal = await upload(skill.id, writeTar([{ path: 'SKILL.md', bytes: Buffer.from('x') }, { path: '../escape.txt', bytes: Buffer.from('x') }]), { 'content-type': 'application/x-tar', ...match });
  assert.is(traversal.status, 400);
  const head = await world.client.get(`/api/v1/skills/${skill.id}`);
  assert.is(head.body.version, 1);
});

test('unsafe paths, duplicates, a missing SKILL.md and too many files are refused with 400', async () => {
  const refused = async (files: Record<string, unknown>) => {
    const response = await world.client.post('/api/v1/skills', { name: 'Bad', files: { 'SKILL.md': 'x', ...files } });
    assert.is(response.status, 400, JSON.stringify(files));
    return response.body.error;
  };
  assert.match((await refused({ '/etc/passwd': 'x' })).message, /absolute/);
  assert.match((await refused({ 'a/../../b': 'x' })).message, /\.\./);
  assert.match((await refused({ 'a\\b': 'x' })).message, /backslash/);
  assert.match((await refused({ 'a\u0001b': 'x' })).message, /control/);
  assert.match((await refused({ 'a//b': 'x' })).message, /empty/);
  assert.match((await refused({ 'skill.md': 'x' })).message, /case/);
  assert.match((await refused({ scripts: 'x', 'scripts/a.py': 'x' })).message, /folder/);
  assert.match((await refused({ 'b.bin': { content_base64: '***' } })).message, /base64/);
  const missing = await world.client.post('/api/v1/skills', { name: 'Bad', files: { 'README.md': 'x' } });
  assert.is(missing.status, 400);
  assert.match(missing.body.error.message, /SKILL\.md/);
  const many = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`f${i}.txt`, 'x']));
  assert.is((await world.client.post('/api/v1/skills', { name: 'Bad', files: { 'SKILL.md': 'x', ...many } })).status, 400);
});

test.run();
