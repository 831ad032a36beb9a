import { createHash } from 'node:crypto';
import type pg from 'pg';
import { AppError } from '../errors/index.js';
import type { KeyRing } from '../keyring/index.js';
import { readModel, readProviderWithCredential, type ReadCaches } from '../cache/index.js';
import type { Model, Provider } from '../stores/index.js';
import { openProviderCredential, credentialHeaders, credentialString, type ProviderCredential } from './provider-credential.js';
import { freshChatgptCredential, mintServiceAccountToken, parseServiceAccountKey, type AccessTokenCache } from './model-auth/index.js';
import type { ApiKeyScheme } from './model-adapters/index.js';
import { checkEndpoint, isModelApi, resolveModelBaseUrl, type EndpointPolicy, type ModelApi, type ModelProviderType, type ProviderRegistry } from './registry/index.js';

// What the run engine calls before each model request: the model by key, its provider, and
// everything a streaming adapter needs (base URL, API, decrypted key and headers). It reads
// the current rows every time (through the process's read cache when given one: a change is
// seen at once in the process that committed it and within the pub/sub delay elsewhere, see
// ReadCaches), so disabling a model or provider stops new use (spec 2.2, 2.13 rule 4).

export interface ResolvedAwsCredentials {
  region: string;
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

export interface ResolvedModel {
  model: Model;
  /** The provider view (no credential). */
  provider: Provider;
  api: ModelApi;
  /** Base URL for `api` (config override or vendor default, plus the API's path). */
  base_url: string;
  api_key?: string;
  /** Headers from config (OpenAI-Organization, anthropic-beta, …) and the credential's extra headers, which win. */
  headers?: Record<string, string>;
  /** Bedrock access keys (SigV4); absent when Bedrock uses an API key. */
  aws?: ResolvedAwsCredentials;
  /** The header api_key travels in when it is not the API's own scheme (Azure `api-key`, a Vertex token as bearer). */
  auth?: ApiKeyScheme;
  /** Gemini on Vertex AI paths: project and location with a service account, none in express mode. */
  vertex?: { project_id?: string; location?: string };
  /** Settings the vendor needs under the model's own (the ChatGPT backend refuses stored responses). */
  settings: Record<string, unknown>;
}

export interface ResolveModelOptions {
  /** When given, the base URL and token endpoints must still pass the deployment's endpoint policy. */
  readonly policy?: EndpointPolicy;
  /** Vertex access tokens minted before (the worker host keeps one cache); without it, every call mints. */
  readonly tokens?: AccessTokenCache;
  readonly fetch?: typeof fetch;
  /** The process's read cache (models by key, providers by id); without it every call reads the rows. */
  readonly caches?: ReadCaches;
}

const VENDOR_SETTINGS: Readonly<Record<string, Record<string, unknown>>> = {
  'openai-chatgpt': { store: false },
};

// Vendor config fields that travel as request headers.
function configHeaders(type: string, config: Readonly<Record<string, unknown>>): Record<string, string> {
  const headers: Record<string, string> = {};
  const set = (name: string, value: unknown) => {
    if (typeof value === 'string' && value.length > 0) headers[name] = value;
  };
  if (type === 'openai') {
    set('OpenAI-Organization', config['organization']);
    set('OpenAI-Project', config['project']);
  } else if (type === 'anthropic' && Array.isArray(config['anthropic_beta'])) {
    set('anthropic-beta', (config['anthropic_beta'] as unknown[]).filter((f) => typeof f === 'string').join(','));
  } else if (type === 'openrouter') {
    set('HTTP-Referer', config['app_url']);
    set('X-Title', config['app_name']);
  }
  return headers;
}

type AuthParts = Pick<ResolvedModel, 'api_key' | 'auth' | 'headers' | 'aws' | 'vertex'>;

interface AuthContext {
  pool: pg.Pool;
  keyring: KeyRing;
  descriptor: ModelProviderType;
  provider: Provider;
  options: ResolveModelOptions;
}

/** The bearer of a Vertex service account: a cached access token, else one minted now. */
async function vertexAccessToken(json: string, ctx: AuthContext): Promise<string> {
  const cacheKey = `${ctx.provider.id}:${createHash('sha256').update(json).digest('hex')}`;
  const cached = ctx.options.tokens?.get(cacheKey);
  if (cached) return cached.token;
  const key = parseServiceAccountKey(json, ctx.provider.id);
  const minted = await mintServiceAccountToken(key, ctx.provider.id, { policy: ctx.options.policy, fetch: ctx.options.fetch });
  ctx.options.tokens?.set(cacheKey, minted);
  return minted.token;
}

/**
 * How requests authenticate, per the type's scheme: a static key (in the header the vendor
 * expects), Bedrock keys, a Vertex access token minted from the service-account key, or the
 * ChatGPT login's access token (renewed and stored first when it is about to expire).
 */
async function authParts(ctx: AuthContext, sealedCredential: ProviderCredential | null): Promise<AuthParts> {
  const { descriptor, provider } = ctx;
  const config = provider.config;
  let credential = sealedCredential;
  if (descriptor.auth === 'chatgpt-login') credential = await freshChatgptCredential(ctx.pool, ctx.keyring, provider, credential, { policy: ctx.options.policy, fetch: ctx.options.fetch });
  const headers = { ...configHeaders(descriptor.type, config), ...(credentialHeaders(credential) ?? {}) };
  const parts: AuthParts = {};
  let apiKey = credentialString(credential, 'api_key');
  if (descriptor.auth === 'chatgpt-login') {
    apiKey = credentialString(credential, 'access_token');
    const account = credentialString(credential, 'account_id');
    if (account !== undefined) headers['ChatGPT-Account-Id'] ??= account;
  } else if (descriptor.auth === 'api-key-header') {
    // Azure: the same `api-key` header for runs as for listing and provider tests.
    parts.auth = 'api-key';
  } else if (descriptor.auth === 'google-service-account') {
    const serviceAccount = credentialString(credential, 'service_account_json');
    if (serviceAccount !== undefined) {
      // Vertex paths name the project and location; the access token is a bearer.
      apiKey = await vertexAccessToken(serviceAccount, ctx);
      parts.auth = 'bearer';
      parts.vertex = { project_id: String(config['project_id'] ?? ''), location: String(config['location'] ?? '') };
    } else {
      parts.vertex = {}; // express mode: an API key on the publisher model path
    }
  }
  const accessKeyId = credentialString(credential, 'access_key_id');
  const secretAccessKey = credentialString(credential, 'secret_access_key');
  const region = config['region'];
  if (descriptor.auth === 'aws' && apiKey === undefined && accessKeyId && secretAccessKey && typeof region === 'string') {
    const sessionToken = credentialString(credential, 'session_token');
    parts.aws = { region, access_key_id: accessKeyId, secret_access_key: secretAccessKey, ...(sessionToken ? { session_token: sessionToken } : {}) };
  }
  if (apiKey !== undefined) parts.api_key = apiKey;
  if (Object.keys(headers).length > 0) parts.headers = headers;
  return parts;
}

/**
 * The model `key` of the workspace, ready to call. Refuses with AppError `not_found` (no such
 * model, or its provider vanished), `disabled` (the model or its provider is disabled),
 * `conflict` (the stored configuration can no longer be used: type uninstalled, API not
 * spoken, no endpoint, endpoint refused by `options.policy`, a key file that is not one, a
 * sign-in the token endpoint refused or a token endpoint that is down; these last carry
 * `details.model_error`: `unauthenticated`, `upstream_unavailable`).
 */
export async function resolveModelForRun(
  db: pg.Pool,
  keyring: KeyRing,
  registry: ProviderRegistry,
  workspaceId: string,
  key: string,
  options: ResolveModelOptions = {},
): Promise<ResolvedModel> {
  const model = await readModel(options.caches, db, workspaceId, key);
  if (!model) throw new AppError('not_found', `model ${key} not found`, { details: { model: key } });
  if (!model.enabled) throw new AppError('disabled', `model ${key} is disabled`, { details: { model: key } });
  const found = await readProviderWithCredential(options.caches, db, workspaceId, model.provider_id, 'model');
  if (!found) throw new AppError('not_found', `provider ${model.provider_id} of model ${key} not found`, { details: { provider_id: model.provider_id } });
  const { provider } = found;
  if (!provider.enabled) throw new AppError('disabled', `provider ${provider.id} of model ${key} is disabled`, { details: { provider_id: provider.id } });
  const descriptor = registry.get('model', provider.type);
  if (!descriptor) throw new AppError('conflict', `model provider type ${provider.type} is not installed`, { details: { provider_id: provider.id } });
  if (!isModelApi(model.api) || !descriptor.apis.includes(model.api)) {
    throw new AppError('conflict', `provider type ${provider.type} does not speak ${model.api}`, { details: { model: key } });
  }
  const baseUrl = resolveModelBaseUrl(descriptor, provider.config, model.api);
  if (baseUrl === undefined) throw new AppError('conflict', `provider ${provider.id} has no base_url`, { details: { provider_id: provider.id } });
  if (options.policy) {
    const verdict = checkEndpoint(baseUrl, options.policy);
    if (!verdict.ok) throw new AppError('conflict', `provider ${provider.id}: ${verdict.reason}`, { details: { provider_id: provider.id, field: 'config.base_url' } });
  }
  const credential = openProviderCredential(keyring, provider, found.credential);
  const auth = await authParts({ pool: db, keyring, descriptor, provider, options }, credential);
  return { model, provider, api: model.api, base_url: baseUrl, ...auth, settings: { ...VENDOR_SETTINGS[provider.type], ...model.settings } };
}
