import { checkEndpoint, resolveModelBaseUrl, type EndpointPolicy, type ProviderType } from '../registry/index.js';
import type { ProviderCredential } from '../provider-credential.js';
import { probeDocker } from './probe-docker.js';
import { probeMcp } from './probe-mcp.js';
import { DEFAULT_MEM0_BASE_URL, probeMem0 } from './probe-mem0.js';
import { probeModelProvider } from './probe-model.js';
import { probePostgres } from './probe-postgres.js';
import { failed, unsupported, type ProbeBudget, type ProbeResult } from './probe-result.js';

// POST /{kind}-providers/{id}/test: exactly what the type's descriptor says. `unsupported`
// types answer so without any call; probe types make one inexpensive call with the stored
// configuration. Callers refuse a disabled provider before getting here.

export interface ProbeInput {
  readonly descriptor: ProviderType;
  readonly config: Readonly<Record<string, unknown>>;
  /** The decrypted credential, null when none is stored. */
  readonly credential: ProviderCredential | null;
  /** The deployment's endpoint policy now: it may have tightened since the provider was stored. */
  readonly policy: EndpointPolicy;
}

/** The endpoint the probe will contact, when it is an HTTP(S) URL the policy must pass. */
function probedEndpoint(input: ProbeInput): { field: string; url: string } | undefined {
  const { descriptor, config } = input;
  for (const field of descriptor.endpoint_fields) {
    const value = config[field];
    if (typeof value === 'string') return { field, url: value };
  }
  if (descriptor.kind === 'model') {
    const url = resolveModelBaseUrl(descriptor, config);
    return url === undefined ? undefined : { field: 'base_url', url };
  }
  if (descriptor.kind === 'memory' && descriptor.type === 'mem0') return { field: 'base_url', url: DEFAULT_MEM0_BASE_URL };
  return undefined;
}

function dispatch(input: ProbeInput, budget: ProbeBudget): Promise<ProbeResult> {
  const { descriptor, config, credential } = input;
  switch (descriptor.kind) {
    case 'model':
      return probeModelProvider(descriptor, config, credential, budget);
    case 'environment':
      return descriptor.type === 'docker' ? probeDocker(config, credential, budget) : Promise.resolve(unsupported());
    case 'connector':
      return descriptor.type === 'mcp' ? probeMcp(config, credential, budget) : Promise.resolve(unsupported());
    case 'memory':
      return descriptor.type === 'mem0' ? probeMem0(config, credential, budget) : probePostgres(config, credential, budget);
    case 'web':
      // Every web type's descriptor says unsupported (spec 4); nothing to call.
      return Promise.resolve(unsupported());
    default: {
      const unreachable: never = descriptor;
      throw new Error(`unknown provider kind ${String((unreachable as { kind?: unknown }).kind)}`);
    }
  }
}

export async function probeProvider(input: ProbeInput, budget: ProbeBudget = {}): Promise<ProbeResult> {
  if (input.descriptor.test === 'unsupported') return unsupported();
  const endpoint = probedEndpoint(input);
  if (endpoint) {
    const verdict = checkEndpoint(endpoint.url, input.policy);
    if (!verdict.ok) return failed(`config.${endpoint.field}: ${verdict.reason}`);
  }
  return dispatch(input, budget);
}
