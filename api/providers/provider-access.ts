import { AppError, type EncryptedCredential, type Provider, type Services } from '../../runtime/index.js';
import {
  createProviderRegistry,
  openCredential,
  type EndpointPolicy,
  type ProviderCredential,
  type ProviderInputProblem,
  type ProviderRegistry,
} from '../../runtime/providers/index.js';

/**
 * One registry per Services (the installed environment types depend on the deployment's
 * environments.enable_local); built on first use so its compiled schema checkers are reused.
 * The cache lives in the route factory's closure, not in module state.
 */
export function createRegistryCache(): (services: Services) => ProviderRegistry {
  const cache = new WeakMap<Services, ProviderRegistry>();
  return (services) => {
    let registry = cache.get(services);
    if (!registry) {
      registry = createProviderRegistry({ enableLocalEnvironment: services.config.environments.enable_local });
      cache.set(services, registry);
    }
    return registry;
  };
}

export function endpointPolicy(services: Services): EndpointPolicy {
  return { allowedHttpOrigins: services.config.providers.allowed_http_origins };
}

/** Problems found by the registry → 400 invalid_argument naming each field (`body.config.base_url`). */
export function refuseProblems(problems: readonly ProviderInputProblem[]): void {
  if (problems.length === 0) return;
  const errors = problems.slice(0, 10).map((p) => ({ field: `body${p.path.replaceAll('/', '.')}`, message: p.message }));
  const first = errors[0]!;
  throw new AppError('invalid_argument', `${first.field}: ${first.message}`, { details: { field: first.field, errors } });
}

/** A provider that is disabled refuses new use (spec 2.13 rule 4). */
export function refuseDisabled(provider: Provider): void {
  if (!provider.enabled) {
    throw new AppError('disabled', `provider ${provider.id} is disabled; enable it with PATCH {"enabled": true} first`, { details: { provider_id: provider.id } });
  }
}

/** The stored credential in clear, for one outbound call or a PATCH comparison. */
export function decryptCredential(services: Services, provider: Provider, sealed: EncryptedCredential | null): ProviderCredential | null {
  if (sealed === null) return null;
  try {
    return openCredential(services.keyring, provider.workspace_id, provider.id, sealed);
  } catch (error) {
    throw new AppError('internal', 'the stored credential cannot be decrypted with this key ring', { cause: error });
  }
}

/** `{}` is no credential at all: storing it would claim credential_configured for nothing. */
export function normaliseCredential(credential: Record<string, unknown> | null | undefined): ProviderCredential | null | undefined {
  if (credential === undefined || credential === null) return credential;
  return Object.keys(credential).length === 0 ? null : credential;
}
