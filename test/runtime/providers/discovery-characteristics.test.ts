import { Value } from '@sinclair/typebox/value';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  FALLBACK_CONTEXT_WINDOW_TOKENS,
  KNOWN_MODELS,
  ModelCharacteristics,
  buildKnownModelIndex,
  characterise,
  normaliseSlug,
} from '../../../runtime/providers/index.js';

const test = suite('runtime/providers/discovery/characteristics-table');

const index = buildKnownModelIndex();
const context = (slug: string) => characterise(index, slug).context_window_tokens;

test('normalises vendor spellings of one model to one form', () => {
  assert.is(normaliseSlug('anthropic/claude-3.5-sonnet'), normaliseSlug('claude-3-5-sonnet'));
  assert.is(normaliseSlug('llama3.1:8b'), normaliseSlug('llama-3.1'));
  assert.is(normaliseSlug('accounts/fireworks/models/llama-v3p1-70b-instruct'), 'llama-3-1-70b-instruct');
  assert.is(normaliseSlug('meta-llama/Meta-Llama-3.1-8B-Instruct'), 'llama-3-1-8b-instruct');
  assert.is(normaliseSlug('models/gemini-2.5-pro'), 'gemini-2-5-pro');
  assert.is(normaliseSlug('Qwen/Qwen2.5-72B-Instruct-Turbo'), 'qwen-2-5-72b-instruct-turbo');
  assert.is(normaliseSlug('claude-3-haiku-20240307'), 'claude-3-haiku-20240307', 'dates stay intact');
});

test('finds the longest known prefix across vendor naming styles', () => {
  assert.is(context('gpt-4o-2024-08-06'), 128_000);
  assert.is(context('gpt-4o-mini'), 128_000);
  assert.is(context('gpt-4.1-mini'), 1_047_576);
  assert.is(context('gpt-4-0613'), 8_192);
  assert.is(context('gpt-5.1'), 400_000);
  assert.is(context('o1-mini-2024-09-12'), 128_000);
  assert.is(context('o3'), 200_000);
  assert.is(context('claude-opus-4-1-20250805'), 200_000);
  assert.is(context('anthropic/claude-3.7-sonnet'), 200_000);
  assert.is(context('gemini-1.5-pro-002'), 2_097_152);
  assert.is(context('llama3:8b'), 8_192);
  assert.is(context('llama3-70b-8192'), 8_192, 'Groq legacy id');
  assert.is(context('accounts/fireworks/models/llama-v3p3-70b-instruct'), 131_072);
  assert.is(context('command-r-08-2024'), 128_000);
  assert.is(context('command-r7b-12-2024'), 128_000);
  assert.is(context('grok-4-1-fast-reasoning'), 2_000_000);
  assert.is(context('moonshot-v1-32k'), 32_768);
  assert.is(context('qwen3-coder-480b-a35b-instruct'), 262_144);
});

test('matches a prefix only at a word boundary and falls back for unknown models', () => {
  assert.is(context('gemma3n:e4b'), FALLBACK_CONTEXT_WINDOW_TOKENS, 'gemma3 does not claim gemma3n');
  assert.is(context('totally-new-model'), FALLBACK_CONTEXT_WINDOW_TOKENS);
  assert.equal(characterise(index, 'totally-new-model').capabilities, []);
});

test('every table row is reachable by its own prefix and has a positive integer window', () => {
  for (const row of KNOWN_MODELS) {
    assert.ok(Number.isInteger(row.context_window_tokens) && row.context_window_tokens > 0, row.prefix);
    assert.is(context(row.prefix), row.context_window_tokens, `${row.prefix} is not shadowed`);
  }
});

test('vendor facts override the table: windows, affirmed and denied capabilities', () => {
  const c = characterise(index, 'gpt-4o', { context_window_tokens: 64_000, capabilities: { image_input: false, reasoning: true } });
  assert.is(c.context_window_tokens, 64_000);
  assert.equal(c.capabilities, ['tools', 'reasoning', 'structured_output']);
  assert.is(c.image_input, undefined);
  assert.is(characterise(index, 'gpt-4o', { context_window_tokens: 0 }).context_window_tokens, 128_000, 'a zero window is ignored');
  const vision = characterise(index, 'unknown-vl', { capabilities: { image_input: true }, image_profile: 'gemini' });
  assert.is(vision.image_input?.max_image_dimension, 3072);
});

test('produces characteristics that satisfy the spec 2.12 schema', () => {
  for (const slug of ['gpt-4o', 'gemini-2.5-pro', 'claude-sonnet-4', 'llama3.2', 'unknown']) {
    assert.ok(Value.Check(ModelCharacteristics, characterise(index, slug)), slug);
  }
});

test.run();
