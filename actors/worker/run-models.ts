import {
  resolveModelForRun,
  type AccessTokenCache,
  type AppError,
  type ProviderRegistry,
  type ResolvedModel,
  type RunRow,
  type Services,
} from '../../runtime/index.js';
import type { ModelTarget } from '../attempt/index.js';

// How a worker host resolves the models of its runs: at the start of an attempt
// (prepare-attempt.ts) and again before each later model request (host request model.resolve),
// always from the current rows, so a disabled model or provider refuses the next request.

/** Where a worker host resolves models: the type registry and the access tokens it minted. */
export interface ModelSources {
  readonly registry: ProviderRegistry;
  readonly tokens: AccessTokenCache;
}

/** The model key the run executes (its configuration with overrides applied). */
export function runModelKey(run: RunRow): string {
  return typeof run.config.model === 'string' ? run.config.model : '';
}

/** A model of the run's workspace, ready to call, as the current rows say (see resolveModelForRun). */
export function resolveRunModel(services: Services, models: ModelSources, workspaceId: string, key: string): Promise<ResolvedModel> {
  return resolveModelForRun(services.pool, services.keyring, models.registry, workspaceId, key, {
    policy: { allowedHttpOrigins: services.config.providers.allowed_http_origins },
    tokens: models.tokens,
    caches: services.caches,
  });
}

export function modelTarget(resolved: ResolvedModel): ModelTarget {
  return {
    api: resolved.api,
    base_url: resolved.base_url,
    ...(resolved.api_key !== undefined ? { api_key: resolved.api_key } : {}),
    ...(resolved.auth !== undefined ? { auth: resolved.auth } : {}),
    ...(resolved.headers ? { headers: resolved.headers } : {}),
    ...(resolved.aws ? { aws: resolved.aws as unknown as Record<string, unknown> } : {}),
    ...(resolved.vertex ? { vertex: resolved.vertex } : {}),
    model: resolved.model.model,
    settings: resolved.settings,
  };
}

/**
 * The failure a run gets when what it needs cannot be prepared: a family's own code
 * (`details.failure_code`, e.g. environment_…), the vendor sign-in's `model_unauthenticated` /
 * `model_upstream_unavailable`, `model_disabled`, else the refusal's own code.
 */
export function modelFailure(error: AppError): { code: string; message: string } {
  const own = error.details?.['failure_code'];
  const modelError = error.details?.['model_error'];
  const code = typeof own === 'string' ? own : typeof modelError === 'string' ? `model_${modelError}` : error.code === 'disabled' ? 'model_disabled' : error.code;
  return { code, message: error.message };
}
