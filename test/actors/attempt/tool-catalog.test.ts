// The tool catalog built from an agent configuration: which tools the model sees, under which
// unique names, with which resolved permission.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSchemaCompiler } from '../../../actors/attempt/json-schema.js';
import { resolvePermission } from '../../../actors/attempt/permissions.js';
import { buildToolCatalog } from '../../../actors/attempt/tools/index.js';

const test = suite('actors/attempt/tool-catalog');

test('permission: the tool’s own setting wins, inherit defers to the toolset, else allow', () => {
  assert.is(resolvePermission('deny', 'allow'), 'deny');
  assert.is(resolvePermission('inherit', 'ask'), 'ask');
  assert.is(resolvePermission(undefined, 'ask'), 'ask');
  assert.is(resolvePermission('inherit', undefined), 'allow');
  assert.is(resolvePermission(undefined, 'inherit'), 'allow');
});

test('enabled toolsets, client tools and ask_user are offered under unique names', () => {
  const catalog = buildToolCatalog(
    {
      toolsets: { utilities: { enabled: true, config: { permission: 'ask' }, tools: { current_time: { enabled: false }, echo: { permission: 'allow' } } }, web: { enabled: true } },
      client_tools: [{ name: 'echo', description: 'client echo', permission: 'inherit' }],
      user_questions: true,
    },
    createSchemaCompiler(),
  );
  assert.equal(catalog.modelTools().map((t) => t.name), ['echo', 'add', 'echo_2', 'ask_user']);
  assert.is(catalog.get('echo')?.kind, 'server');
  assert.is(catalog.get('echo')?.permission, 'allow');
  assert.is(catalog.get('add')?.permission, 'ask');
  assert.is(catalog.get('echo_2')?.kind, 'client');
  assert.is(catalog.get('echo_2')?.name, 'echo', 'a renamed client tool is still reported under its own name');
  assert.is(catalog.get('echo_2')?.permission, 'allow');
});

test('a disabled toolset offers nothing', () => {
  const catalog = buildToolCatalog({ toolsets: { utilities: { enabled: false } } }, createSchemaCompiler());
  assert.is(catalog.size, 0);
});

test.run();
