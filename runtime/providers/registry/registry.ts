import type { EndpointPolicy } from '../endpoint-policy.js';
import { CONNECTOR_PROVIDER_TYPES } from './connector-types.js';
import { describeProviderType, type ProviderTypeDescription } from './describe-provider-type.js';
import { ENVIRONMENT_PROVIDER_TYPES, LOCAL_ENVIRONMENT_TYPE } from './environment-types.js';
import { MEMORY_PROVIDER_TYPES } from './memory-types.js';
import { MODEL_PROVIDER_TYPES } from './model-types.js';
import { PROVIDER_KINDS, isProviderKind, type ProviderKind } from './provider-kinds.js';
import type { ProviderTypeByKind } from './provider-type.js';
import { providerTypeProblems, type ProviderInputProblem, type SchemaCheckers } from './validate-provider-input.js';
import { WEB_PROVIDER_TYPES } from './web-types.js';

export interface ProviderRegistryOptions {
  /** environments.enable_local: install the `local` environment type (development only). */
  readonly enableLocalEnvironment: boolean;
}

export interface ProviderRegistry {
  readonly kinds: readonly ProviderKind[];
  /** Installed types of a kind, in a stable order. */
  types<K extends ProviderKind>(kind: K): readonly ProviderTypeByKind[K][];
  get<K extends ProviderKind>(kind: K, type: string): ProviderTypeByKind[K] | undefined;
  /** The body of GET /provider-types/{kind}: JSON-ready, schemas as plain JSON Schema. */
  describe(kind: ProviderKind): ProviderTypeDescription[];
  /**
   * Problems of a provider input: unknown kind or type, config or credential violating the
   * type's schemas, endpoints refused by `policy` (when given). Empty when the input is valid.
   * `config`/`credential` undefined are not checked (PATCH omission); `credential` null
   * means "no credential" and is a problem for types that require one.
   */
  validateProviderInput(
    kind: string,
    type: string,
    config: unknown,
    credential: unknown,
    policy?: EndpointPolicy,
  ): ProviderInputProblem[];
}

type TypeTable = { readonly [K in ProviderKind]: readonly ProviderTypeByKind[K][] };

export function createProviderRegistry(options: ProviderRegistryOptions): ProviderRegistry {
  const table: TypeTable = {
    model: MODEL_PROVIDER_TYPES,
    web: WEB_PROVIDER_TYPES,
    environment: options.enableLocalEnvironment
      ? [...ENVIRONMENT_PROVIDER_TYPES, LOCAL_ENVIRONMENT_TYPE]
      : ENVIRONMENT_PROVIDER_TYPES,
    connector: CONNECTOR_PROVIDER_TYPES,
    memory: MEMORY_PROVIDER_TYPES,
  };
  const checkers: SchemaCheckers = new WeakMap();

  const types = <K extends ProviderKind>(kind: K): readonly ProviderTypeByKind[K][] => table[kind];
  const get = <K extends ProviderKind>(kind: K, type: string): ProviderTypeByKind[K] | undefined =>
    types(kind).find((t) => t.type === type);

  return {
    kinds: PROVIDER_KINDS,
    types,
    get,
    describe: (kind) => types(kind).map(describeProviderType),
    validateProviderInput(kind, type, config, credential, policy) {
      if (!isProviderKind(kind)) {
        return [{ path: '/kind', message: `unknown provider kind; expected one of ${PROVIDER_KINDS.join(', ')}` }];
      }
      const descriptor = get(kind, type);
      if (!descriptor) {
        const known = types(kind).map((t) => t.type).join(', ');
        return [{ path: '/type', message: `unknown ${kind} provider type; installed: ${known}` }];
      }
      return providerTypeProblems(checkers, descriptor, config, credential, policy);
    },
  };
}
