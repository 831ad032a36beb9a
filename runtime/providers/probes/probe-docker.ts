import type { ProviderCredential } from '../provider-credential.js';
import { credentialString } from '../provider-credential.js';
import { failed, succeeded, type ProbeBudget, type ProbeResult } from './probe-result.js';
import { ProbeTransportError, sendProbe, statusMessage } from './probe-request.js';

// The docker test only pings the engine and creates nothing (spec 4): GET /_ping answers
// "OK" on every engine version. A remote engine (base_url) is reached over HTTP(S) with the
// stored TLS material; otherwise the local socket.
const DEFAULT_SOCKET = '/var/run/docker.sock';

export async function probeDocker(config: Readonly<Record<string, unknown>>, credential: ProviderCredential | null, budget: ProbeBudget): Promise<ProbeResult> {
  const baseUrl = typeof config['base_url'] === 'string' ? config['base_url'] : undefined;
  const socketPath = baseUrl === undefined ? (typeof config['socket_path'] === 'string' ? config['socket_path'] : DEFAULT_SOCKET) : undefined;
  const url = baseUrl !== undefined ? new URL(`${baseUrl.replace(/\/+$/, '')}/_ping`) : new URL('http://docker/_ping');
  const ca = credentialString(credential, 'tls_ca');
  const cert = credentialString(credential, 'tls_cert');
  const key = credentialString(credential, 'tls_key');
  try {
    const response = await sendProbe(
      {
        url,
        method: 'GET',
        ...(socketPath !== undefined ? { socketPath } : {}),
        tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
      },
      budget,
    );
    if (response.status !== 200) return failed(`the Docker engine ${statusMessage(response, url, socketPath)}`);
    if (response.text.trim() !== 'OK') return failed('the endpoint answered /_ping, but not as a Docker engine does ("OK")');
    return succeeded();
  } catch (error) {
    if (error instanceof ProbeTransportError) return failed(error.message);
    throw error;
  }
}
