import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError, buildSkillPackage, checkJsonSchema, readTarFiles, skillPathProblem } from '../../../runtime/index.js';
import { writeTar } from '../../api/skills/tar-writer.js';

const test = suite('runtime/agents/skill-package');

/** A tar entry header for pax / GNU long-name records (type x or L) followed by its data. */
function longNameEntries(type: 'x' | 'L', path: string): Buffer {
  const data = type === 'x' ? paxRecord('path', path) : Buffer.from(`${path}\0`);
  const tar = writeTar([{ path: type === 'x' ? 'PaxHeader/f' : '././@LongLink', bytes: data }]);
  tar[156] = type.charCodeAt(0);
  // recompute the checksum after changing the type flag
  tar.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += tar[i]!;
  tar.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return tar.subarray(0, tar.length - 1024);
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return Buffer.from(`${length}${body}`);
}

test('pax and GNU long names name the following file', () => {
  const long = `${'x'.repeat(150)}/${'y'.repeat(150)}.txt`;
  for (const type of ['x', 'L'] as const) {
    const archive = Buffer.concat([longNameEntries(type, long), writeTar([{ path: 'short-name', bytes: Buffer.from('data') }, { path: 'SKILL.md', bytes: Buffer.from('s') }])]);
    const files = readTarFiles(archive);
    assert.equal(files.map((f) => f.path), [long, 'SKILL.md']);
    assert.is(files[0]!.bytes.toString(), 'data');
  }
});

test('a corrupted header checksum is refused', () => {
  const tar = writeTar([{ path: 'SKILL.md', bytes: Buffer.from('x') }]);
  tar[0] = 'Z'.charCodeAt(0);
  assert.throws(() => readTarFiles(tar), (e: unknown) => e instanceof AppError && /checksum/.test(e.message));
});

test('path rules', () => {
  for (const bad of ['', '/a', 'C:/a', 'a/../b', '..', 'a\\b', 'a\u0000b', 'a//b', './a', 'a/']) assert.ok(skillPathProblem(bad), JSON.stringify(bad));
  for (const good of ['SKILL.md', 'scripts/run.py', 'a b/c-d_e.txt', 'ünï/cödé']) assert.is(skillPathProblem(good), null, good);
});

test('equal packages have equal digests whatever the order; content changes the digest', () => {
  const field = (p: string) => p;
  const a = buildSkillPackage([{ path: 'SKILL.md', bytes: Buffer.from('s') }, { path: 'b', bytes: Buffer.from('1') }], field);
  const b = buildSkillPackage([{ path: 'b', bytes: Buffer.from('1') }, { path: 'SKILL.md', bytes: Buffer.from('s') }], field);
  const c = buildSkillPackage([{ path: 'b', bytes: Buffer.from('2') }, { path: 'SKILL.md', bytes: Buffer.from('s') }], field);
  assert.is(a.digest, b.digest);
  assert.is.not(a.digest, c.digest);
});

test('JSON Schema structural check', () => {
  assert.is(checkJsonSchema({ type: ['string', 'null'], anyOf: [{ minLength: 1 }, true], $defs: { x: { enum: [1] } } }, 's'), null);
  assert.is(checkJsonSchema({ items: [{ type: 'string' }], additionalItems: false, 'x-vendor': 1 }, 's'), null);
  assert.equal(checkJsonSchema({ anyOf: [] }, 's')?.field, 's.anyOf');
  assert.equal(checkJsonSchema({ minimum: 5, maximum: 1 }, 's')?.field, 's.minimum');
  assert.equal(checkJsonSchema({ patternProperties: { '(': {} } }, 's')?.field, 's.patternProperties');
  assert.equal(checkJsonSchema({ properties: { a: { items: { minItems: -1 } } } }, 's')?.field, 's.properties.a.items.minItems');
  assert.equal(checkJsonSchema([], 's')?.field, 's');
});

test.run();
