import { isDiscoveryError, listVendorModels } from '../discovery/index.js';
import type { ModelProviderType } from '../registry/index.js';
import { credentialHeaders, credentialString, type ProviderCredential } from '../provider-credential.js';
import { failed, succeeded, unsupported, type ProbeBudget, type ProbeResult } from './probe-result.js';

// A model provider's probe is the vendor's model listing (spec 4: one inexpensive call with
// the stored configuration); it spends no tokens. Discovery already removes the key from
// every message it builds.
export async function probeModelProvider(
  descriptor: ModelProviderType,
  config: Readonly<Record<string, unknown>>,
  credential: ProviderCredential | null,
  budget: ProbeBudget,
): Promise<ProbeResult> {
  const baseUrl = config['base_url'];
  try {
    await listVendorModels(
      descriptor,
      {
        base_url: typeof baseUrl === 'string' ? baseUrl : undefined,
        api_key: credentialString(credential, 'api_key'),
        headers: credentialHeaders(credential),
        config,
      },
      { ...(budget.signal ? { signal: budget.signal } : {}), ...(budget.timeout_ms !== undefined ? { timeout_ms: budget.timeout_ms } : {}) },
    );
    return succeeded();
  } catch (error) {
    if (!isDiscoveryError(error)) throw error;
    return error.code === 'unsupported' ? unsupported() : failed(error.message);
  }
}
