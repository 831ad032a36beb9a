import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listVendorModels } from '../../../runtime/providers/index.js';
import { KEY, bySlug, json, modelType, vendor } from './fake-vendor.js';

// Each vendor family's listing against a local server speaking that vendor's format (shapes
// from the vendors' API references): request headers and paths, paging, mapped entries.
const test = suite('runtime/providers/discovery (listings)');

test('OpenAI: GET {base}/models with a Bearer key, chat models only, characteristics from the table', async () => {
  const v = await vendor((_req, res) =>
    json(res, 200, {
      object: 'list',
      data: [
        { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
        { id: 'o3-mini', object: 'model', created: 1737146383, owned_by: 'system' },
        { id: 'text-embedding-3-small', object: 'model', created: 1705948997, owned_by: 'system' },
        { id: 'whisper-1', object: 'model', created: 1677532384, owned_by: 'openai-internal' },
        { id: 'my-finetune-xyz', object: 'model', created: 1, owned_by: 'user' },
      ],
    }),
  );
  try {
    const models = await listVendorModels(modelType('openai'), { base_url: `${v.base}/v1`, api_key: KEY, headers: { 'x-team': 'a' } });
    assert.is(v.seen.length, 1);
    assert.is(v.seen[0]?.method, 'GET');
    assert.is(v.seen[0]?.path, '/v1/models');
    assert.is(v.seen[0]?.headers['authorization'], `Bearer ${KEY}`);
    assert.is(v.seen[0]?.headers['x-team'], 'a');
    assert.equal(models.map((m) => m.slug), ['gpt-4o', 'my-finetune-xyz', 'o3-mini']);
    const gpt4o = bySlug(models, 'gpt-4o');
    assert.is(gpt4o.display_name, 'gpt-4o');
    assert.is(gpt4o.characteristics.context_window_tokens, 128_000);
    assert.ok(gpt4o.characteristics.capabilities.includes('tools'));
    assert.ok(gpt4o.characteristics.capabilities.includes('image_input'));
    assert.is(gpt4o.characteristics.image_input?.max_images, 500);
    assert.is(gpt4o.characteristics.compact_threshold, 0.8);
    assert.is(gpt4o.characteristics.proactive_context_management_threshold, 0.6);
    const o3mini = bySlug(models, 'o3-mini');
    assert.ok(o3mini.characteristics.capabilities.includes('reasoning'));
    assert.is(o3mini.characteristics.image_input, undefined, 'no image limits for a text-only model');
    assert.is(bySlug(models, 'my-finetune-xyz').characteristics.context_window_tokens, 32_768, 'unknown model falls back');
  } finally {
    await v.close();
  }
});

test('OpenAI-compatible vendors: reads Groq context_window, Together bare arrays and OpenRouter architecture', async () => {
  const groq = await vendor((_req, res) =>
    json(res, 200, {
      object: 'list',
      data: [{ id: 'llama-3.3-70b-versatile', object: 'model', created: 1733447754, owned_by: 'Meta', active: true, context_window: 131072, max_completion_tokens: 32768 }],
    }),
  );
  const together = await vendor((_req, res) =>
    json(res, 200, [
      { id: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', object: 'model', created: 0, type: 'chat', display_name: 'Meta Llama 3.3 70B Instruct Turbo', organization: 'Meta', context_length: 131072 },
      { id: 'BAAI/bge-large-en-v1.5', object: 'model', created: 0, type: 'embedding', display_name: 'BAAI-Bge-Large-1p5', context_length: 512 },
    ]),
  );
  const openrouter = await vendor((_req, res) =>
    json(res, 200, {
      data: [
        {
          id: 'anthropic/claude-3.5-sonnet',
          canonical_slug: 'anthropic/claude-3.5-sonnet',
          name: 'Anthropic: Claude 3.5 Sonnet',
          context_length: 200000,
          architecture: { modality: 'text+image->text', input_modalities: ['text', 'image', 'file'], output_modalities: ['text'], tokenizer: 'Claude' },
          top_provider: { context_length: 200000, max_completion_tokens: 8192, is_moderated: true },
          supported_parameters: ['max_tokens', 'temperature', 'tools', 'tool_choice', 'stop'],
        },
        {
          id: 'openai/gpt-image-1',
          name: 'OpenAI: GPT Image',
          context_length: 0,
          architecture: { input_modalities: ['text'], output_modalities: ['image'] },
        },
      ],
    }),
  );
  try {
    const g = await listVendorModels(modelType('groq'), { base_url: `${groq.base}/openai/v1`, api_key: KEY });
    assert.is(groq.seen[0]?.path, '/openai/v1/models');
    assert.is(bySlug(g, 'llama-3.3-70b-versatile').characteristics.context_window_tokens, 131_072);

    const t = await listVendorModels('openai-compatible', { base_url: `${together.base}/v1`, api_key: KEY });
    assert.equal(t.map((m) => m.slug), ['meta-llama/Llama-3.3-70B-Instruct-Turbo']);
    assert.is(t[0]?.display_name, 'Meta Llama 3.3 70B Instruct Turbo');
    assert.ok(t[0]?.characteristics.capabilities.includes('tools'), 'table knows llama 3.3 calls tools');

    const o = await listVendorModels(modelType('openrouter'), { base_url: `${openrouter.base}/api/v1`, api_key: KEY });
    assert.equal(o.map((m) => m.slug), ['anthropic/claude-3.5-sonnet']);
    const claude = o[0];
    assert.is(claude?.display_name, 'Anthropic: Claude 3.5 Sonnet');
    assert.is(claude?.characteristics.context_window_tokens, 200_000);
    assert.equal(claude?.characteristics.capabilities, ['tools', 'image_input', 'pdf_input']);
    assert.is(claude?.characteristics.image_input?.max_image_bytes, 5_242_880, 'Anthropic image limits via the table');
  } finally {
    await Promise.all([groq.close(), together.close(), openrouter.close()]);
  }
});

test('Mistral: reads max_context_length and the capabilities object', async () => {
  const v = await vendor((_req, res) =>
    json(res, 200, {
      object: 'list',
      data: [
        {
          id: 'pixtral-large-latest', object: 'model', created: 1, owned_by: 'mistralai', name: 'pixtral-large-2411',
          capabilities: { completion_chat: true, completion_fim: false, function_calling: true, fine_tuning: false, vision: true, classification: false },
          max_context_length: 131072, type: 'base',
        },
        {
          id: 'mistral-embed', object: 'model', created: 1, owned_by: 'mistralai', name: 'mistral-embed',
          capabilities: { completion_chat: false, function_calling: false, vision: false },
          max_context_length: 8192, type: 'base',
        },
      ],
    }),
  );
  try {
    const models = await listVendorModels(modelType('mistral'), { base_url: `${v.base}/v1`, api_key: KEY });
    assert.equal(models.map((m) => m.slug), ['pixtral-large-latest']);
    assert.is(models[0]?.display_name, 'pixtral-large-2411');
    assert.equal(models[0]?.characteristics.capabilities, ['tools', 'image_input']);
    assert.is(models[0]?.characteristics.image_input?.max_images, 8);
  } finally {
    await v.close();
  }
});

test('Azure: sends the key in the api-key header and keeps the base query (api-version)', async () => {
  const v = await vendor((_req, res) => json(res, 200, { object: 'list', data: [{ id: 'gpt-4.1', object: 'model', created: 1 }] }));
  try {
    const models = await listVendorModels(modelType('azure'), { base_url: `${v.base}/openai/v1?api-version=preview`, api_key: KEY });
    const req = v.seen[0];
    assert.is(req?.path, '/openai/v1/models');
    assert.is(req?.query.get('api-version'), 'preview');
    assert.is(req?.headers['api-key'], KEY);
    assert.is(req?.headers['authorization'], undefined);
    assert.is(bySlug(models, 'gpt-4.1').characteristics.context_window_tokens, 1_047_576);
  } finally {
    await v.close();
  }
});

test('Vercel and Ollama: the OpenAI listing sits under the per-API path of the vendor root', async () => {
  const v = await vendor((_req, res) =>
    json(res, 200, {
      object: 'list',
      data: [
        { id: 'xai/grok-4', object: 'model', created: 1, owned_by: 'xai', name: 'Grok 4', context_window: 256000, max_tokens: 256000, type: 'language', tags: ['reasoning', 'tool-use', 'vision'] },
        { id: 'openai/text-embedding-3-small', object: 'model', created: 1, owned_by: 'openai', name: 'text-embedding-3-small', type: 'embedding' },
      ],
    }),
  );
  try {
    const models = await listVendorModels(modelType('vercel'), { base_url: v.base, api_key: KEY });
    assert.is(v.seen[0]?.path, '/v1/models');
    assert.equal(models.map((m) => m.slug), ['xai/grok-4']);
    assert.equal(models[0]?.characteristics.capabilities, ['tools', 'image_input', 'reasoning', 'structured_output']);
  } finally {
    await v.close();
  }
});

test('Anthropic: x-api-key and anthropic-version headers, pages by after_id while has_more', async () => {
  const v = await vendor((req, res) => {
    if (!req.query.get('after_id')) {
      json(res, 200, {
        data: [{ type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' }],
        has_more: true,
        first_id: 'claude-sonnet-4-5-20250929',
        last_id: 'claude-sonnet-4-5-20250929',
      });
      return;
    }
    json(res, 200, {
      data: [
        {
          type: 'model', id: 'claude-3-haiku-20240307', display_name: 'Claude Haiku 3', created_at: '2024-03-07T00:00:00Z',
          max_input_tokens: 200000, max_tokens: 4096,
          capabilities: { image_input: { supported: true }, pdf_input: { supported: false }, thinking: { supported: false } },
        },
      ],
      has_more: false,
      first_id: 'claude-3-haiku-20240307',
      last_id: 'claude-3-haiku-20240307',
    });
  });
  try {
    const models = await listVendorModels(modelType('anthropic'), { base_url: v.base, api_key: KEY });
    assert.is(v.seen.length, 2);
    for (const req of v.seen) {
      assert.is(req.path, '/v1/models');
      assert.is(req.headers['x-api-key'], KEY);
      assert.is(req.headers['anthropic-version'], '2023-06-01');
      assert.is(req.headers['authorization'], undefined);
    }
    assert.is(v.seen[1]?.query.get('after_id'), 'claude-sonnet-4-5-20250929');
    assert.equal(models.map((m) => m.slug), ['claude-sonnet-4-5-20250929', 'claude-3-haiku-20240307']);
    const sonnet = bySlug(models, 'claude-sonnet-4-5-20250929');
    assert.is(sonnet.display_name, 'Claude Sonnet 4.5');
    assert.ok(sonnet.characteristics.capabilities.includes('reasoning'));
    assert.is(sonnet.characteristics.image_input?.image_split_max_height, 1568);
    const haiku = bySlug(models, 'claude-3-haiku-20240307');
    assert.equal(haiku.characteristics.capabilities, ['tools', 'image_input']);
  } finally {
    await v.close();
  }
});

test('Gemini: key in x-goog-api-key (never the URL), follows nextPageToken, uses inputTokenLimit', async () => {
  const v = await vendor((req, res) => {
    if (req.query.get('pageToken') !== 'page-2') {
      json(res, 200, {
        models: [
          {
            name: 'models/gemini-2.5-flash', baseModelId: 'gemini-2.5-flash', version: '001', displayName: 'Gemini 2.5 Flash',
            inputTokenLimit: 1048576, outputTokenLimit: 65536,
            supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
            temperature: 1, maxTemperature: 2, topP: 0.95, topK: 64, thinking: true,
          },
          {
            name: 'models/text-embedding-004', version: '004', displayName: 'Text Embedding 004',
            inputTokenLimit: 2048, outputTokenLimit: 1, supportedGenerationMethods: ['embedContent'],
          },
        ],
        nextPageToken: 'page-2',
      });
      return;
    }
    json(res, 200, {
      models: [
        {
          name: 'models/gemini-2.0-flash-001', version: '2.0', displayName: 'Gemini 2.0 Flash 001',
          inputTokenLimit: 1000000, outputTokenLimit: 8192, supportedGenerationMethods: ['generateContent', 'countTokens'],
        },
      ],
    });
  });
  try {
    const models = await listVendorModels(modelType('google'), { base_url: v.base, api_key: KEY });
    assert.is(v.seen.length, 2);
    for (const req of v.seen) {
      assert.is(req.path, '/v1beta/models');
      assert.is(req.headers['x-goog-api-key'], KEY);
      assert.is(req.query.get('key'), null);
    }
    assert.equal(models.map((m) => m.slug), ['gemini-2.5-flash', 'gemini-2.0-flash-001']);
    const flash = bySlug(models, 'gemini-2.5-flash');
    assert.is(flash.display_name, 'Gemini 2.5 Flash');
    assert.is(flash.characteristics.context_window_tokens, 1_048_576);
    assert.ok(flash.characteristics.capabilities.includes('reasoning'));
    assert.ok(flash.characteristics.capabilities.includes('video_input'));
    assert.equal(flash.characteristics.url_input?.video.includes('youtu.be'), true);
    assert.is(flash.characteristics.image_input?.support_gif, false);
    assert.is(bySlug(models, 'gemini-2.0-flash-001').characteristics.context_window_tokens, 1_000_000, 'vendor limit wins');
  } finally {
    await v.close();
  }
});

test('Cohere: Bearer key, endpoint=chat filter, follows next_page_token, maps context_length and features', async () => {
  const v = await vendor((req, res) => {
    if (!req.query.get('page_token')) {
      json(res, 200, {
        models: [
          { name: 'command-a-03-2025', endpoints: ['generate', 'chat', 'summarize'], finetuned: false, context_length: 256000, tokenizer_url: 'https://example/tokenizer.json', default_endpoints: ['chat'], features: ['json_mode', 'json_schema', 'safety_modes', 'strict_tools', 'tool_choice', 'tools'] },
        ],
        next_page_token: 'next-1',
      });
      return;
    }
    json(res, 200, {
      models: [
        { name: 'command-a-vision-07-2025', endpoints: ['chat'], finetuned: false, context_length: 128000, features: ['vision', 'json_mode'] },
        { name: 'embed-v4.0', endpoints: ['embed'], finetuned: false, context_length: 128000 },
      ],
    });
  });
  try {
    const models = await listVendorModels(modelType('cohere'), { base_url: v.base, api_key: KEY });
    assert.is(v.seen.length, 2);
    for (const req of v.seen) {
      assert.is(req.path, '/v1/models');
      assert.is(req.headers['authorization'], `Bearer ${KEY}`);
      assert.is(req.query.get('endpoint'), 'chat');
    }
    assert.is(v.seen[1]?.query.get('page_token'), 'next-1');
    assert.equal(models.map((m) => m.slug), ['command-a-03-2025', 'command-a-vision-07-2025']);
    const a = bySlug(models, 'command-a-03-2025');
    assert.is(a.characteristics.context_window_tokens, 256_000);
    assert.equal(a.characteristics.capabilities, ['tools', 'structured_output']);
    assert.ok(bySlug(models, 'command-a-vision-07-2025').characteristics.capabilities.includes('image_input'));
  } finally {
    await v.close();
  }
});

test('Ollama: lists /api/tags, reads /api/show for capabilities and context, skips embedding models, sends no key', async () => {
  const v = await vendor((req, res) => {
    if (req.path === '/api/tags') {
      json(res, 200, {
        models: [
          { name: 'gemma3:latest', model: 'gemma3:latest', modified_at: '2025-10-03T23:34:03.409490317-07:00', size: 3338801804, digest: 'a2af6cc3', details: { format: 'gguf', family: 'gemma', families: ['gemma'], parameter_size: '4.3B', quantization_level: 'Q4_K_M' } },
          { name: 'nomic-embed-text:latest', model: 'nomic-embed-text:latest', size: 274302450, digest: '0a109f42', details: { format: 'gguf', family: 'nomic-bert', parameter_size: '137M', quantization_level: 'F16' } },
          { name: 'mystery:7b', model: 'mystery:7b', size: 1, digest: 'x', details: {} },
        ],
      });
      return;
    }
    if (req.path === '/api/show') {
      const { model } = JSON.parse(req.body) as { model: string };
      if (model === 'gemma3:latest') {
        json(res, 200, {
          modelfile: '', parameters: 'stop "<end_of_turn>"', template: '', details: { family: 'gemma3' },
          model_info: { 'general.architecture': 'gemma3', 'gemma3.context_length': 131072 },
          capabilities: ['completion', 'vision'],
          modified_at: '2025-10-03T23:34:03.409490317-07:00',
        });
      } else if (model === 'nomic-embed-text:latest') {
        json(res, 200, { model_info: { 'general.architecture': 'nomic-bert', 'nomic-bert.context_length': 2048 }, capabilities: ['embedding'] });
      } else {
        json(res, 404, { error: `model '${model}' not found` });
      }
      return;
    }
    json(res, 404, { error: 'not found' });
  });
  try {
    const models = await listVendorModels(modelType('ollama'), { base_url: v.base });
    assert.is(v.seen.filter((r) => r.path === '/api/show').length, 3);
    assert.ok(v.seen.every((r) => r.headers['authorization'] === undefined));
    assert.equal(models.map((m) => m.slug), ['gemma3:latest', 'mystery:7b']);
    const gemma = bySlug(models, 'gemma3:latest');
    assert.is(gemma.characteristics.context_window_tokens, 131_072);
    assert.equal(gemma.characteristics.capabilities, ['image_input']);
    assert.is(bySlug(models, 'mystery:7b').characteristics.context_window_tokens, 32_768, 'a failed show only loses detail');
  } finally {
    await v.close();
  }
});

test.run();
