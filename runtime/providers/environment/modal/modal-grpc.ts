import * as grpc from '@grpc/grpc-js';
import { checkEndpoint } from '../../endpoint-policy.js';
import { credentialString } from '../../provider-credential.js';
import { EnvironmentVendorError, type EnvironmentHostSettings, type EnvironmentProviderAccess, type VendorFailure } from '../environment-client.js';
import { decodeMessage, encodeMessage, modalMethods, type ModalMethod } from './modal-proto.js';

// One gRPC channel to Modal's API per client (api.modal.com:443 over TLS by default, or the
// provider's base_url; plain http only where providers.allowed_http_origins allows it), with
// the token pair as call metadata on every call, and gRPC statuses classified the way
// vendor-http.ts classifies HTTP statuses.

export const DEFAULT_MODAL_URL = 'https://api.modal.com';
const MAX_MESSAGE_BYTES = 100 * 1024 * 1024;

export interface ModalChannel {
  unary(method: string, request: Record<string, unknown>, signal: AbortSignal, doing: string, timeoutMs?: number): Promise<Record<string, any>>; // any: decoded protobuf
  stream(method: string, request: Record<string, unknown>, signal: AbortSignal, doing: string, onMessage: (message: Record<string, any>) => boolean | void, timeoutMs?: number): Promise<void>; // any: decoded protobuf
}

const FAILURE_OF: Partial<Record<grpc.status, VendorFailure>> = {
  [grpc.status.UNAUTHENTICATED]: 'unauthenticated',
  [grpc.status.PERMISSION_DENIED]: 'unauthenticated',
  [grpc.status.NOT_FOUND]: 'not_found',
  [grpc.status.DEADLINE_EXCEEDED]: 'timeout',
  [grpc.status.UNAVAILABLE]: 'unavailable',
  [grpc.status.RESOURCE_EXHAUSTED]: 'unavailable',
  [grpc.status.INTERNAL]: 'unavailable',
  [grpc.status.UNKNOWN]: 'unavailable',
  [grpc.status.ABORTED]: 'unavailable',
};

/** A gRPC failure as the environment layer's vendor error. */
export function modalError(error: unknown, method: string, doing: string, signal: AbortSignal): EnvironmentVendorError {
  if (error instanceof EnvironmentVendorError) return error;
  const e = error as Partial<grpc.ServiceError>;
  if (e.code === grpc.status.CANCELLED && signal.aborted) return new EnvironmentVendorError('timeout', `${doing}: Modal did not answer ${method} in time`);
  const code = typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN;
  const detail = e.details || e.message || 'no detail';
  if (code === grpc.status.UNAVAILABLE && /connect|ECONNREFUSED|No connection|DNS/i.test(detail)) {
    return new EnvironmentVendorError('unavailable', `${doing}: could not reach Modal (${detail})`);
  }
  return new EnvironmentVendorError(FAILURE_OF[code] ?? 'refused', `${doing}: Modal answered ${grpc.status[code] ?? code} to ${method}: ${detail}`);
}

function targetOf(baseUrl: string, settings: EnvironmentHostSettings): { target: string; secure: boolean } {
  const checked = checkEndpoint(baseUrl, { allowedHttpOrigins: settings.allowedHttpOrigins });
  if (!checked.ok) throw new EnvironmentVendorError('refused', `the Modal endpoint is refused by the endpoint policy: ${checked.reason}`);
  const url = new URL(baseUrl);
  const secure = url.protocol === 'https:';
  return { target: `${url.hostname.includes(':') ? `[${url.hostname}]` : url.hostname}:${url.port || (secure ? 443 : 80)}`, secure };
}

// Clients are made per use (runtime/environments), so the HTTP/2 connection is shared per
// endpoint for the process: the credentials travel as per-call metadata, not in the channel.
const CLIENTS = new Map<string, grpc.Client>();
function sharedClient(target: string, secure: boolean): grpc.Client {
  const key = `${secure ? 'tls' : 'plain'}|${target}`;
  let client = CLIENTS.get(key);
  if (!client) {
    client = new grpc.Client(target, secure ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.client_idle_timeout_ms': 60_000,
    });
    CLIENTS.set(key, client);
  }
  return client;
}

export function openModalChannel(provider: EnvironmentProviderAccess, settings: EnvironmentHostSettings): ModalChannel {
  const tokenId = credentialString(provider.credential, 'token_id');
  const tokenSecret = credentialString(provider.credential, 'token_secret');
  if (!tokenId || !tokenSecret) throw new EnvironmentVendorError('unauthenticated', 'the Modal provider has no token_id/token_secret credential');
  const configured = provider.config['base_url'];
  const { target, secure } = targetOf((typeof configured === 'string' ? configured : DEFAULT_MODAL_URL).replace(/\/+$/, ''), settings);
  const client = sharedClient(target, secure);
  const methods = modalMethods();
  const metadata = (): grpc.Metadata => {
    const m = new grpc.Metadata();
    m.set('x-modal-token-id', tokenId);
    m.set('x-modal-token-secret', tokenSecret);
    // Modal's server asks every caller for its client type and version; 8 is the type of
    // Modal's own JS client (CLIENT_TYPE_LIBMODAL_JS), the one for callers that are not the
    // Python client.
    m.set('x-modal-client-type', '8');
    m.set('x-modal-client-version', '1.0.0');
    return m;
  };
  const methodOf = (name: string): ModalMethod => {
    const method = methods.get(name);
    if (!method) throw new Error(`unknown Modal method ${name}`);
    return method;
  };
  const options = (timeoutMs: number | undefined): grpc.CallOptions => (timeoutMs ? { deadline: new Date(Date.now() + timeoutMs) } : {});

  return {
    unary(name, request, signal, doing, timeoutMs = 60_000) {
      const method = methodOf(name);
      if (signal.aborted) return Promise.reject(new EnvironmentVendorError('timeout', `${doing}: gave up before calling Modal`));
      return new Promise((resolve, reject) => {
        const call = client.makeUnaryRequest(
          method.path,
          (value: Record<string, unknown>) => encodeMessage(method.requestType, value),
          (bytes: Buffer) => decodeMessage(method.responseType, bytes),
          request,
          metadata(),
          options(timeoutMs),
          (error, response) => {
            signal.removeEventListener('abort', cancel);
            if (error) reject(modalError(error, name, doing, signal));
            else resolve(response ?? {});
          },
        );
        const cancel = () => call.cancel();
        signal.addEventListener('abort', cancel, { once: true });
      });
    },
    stream(name, request, signal, doing, onMessage, timeoutMs) {
      const method = methodOf(name);
      if (signal.aborted) return Promise.reject(new EnvironmentVendorError('timeout', `${doing}: gave up before calling Modal`));
      return new Promise((resolve, reject) => {
        const call = client.makeServerStreamRequest(
          method.path,
          (value: Record<string, unknown>) => encodeMessage(method.requestType, value),
          (bytes: Buffer) => decodeMessage(method.responseType, bytes),
          request,
          metadata(),
          options(timeoutMs),
        );
        let done = false;
        const cancel = () => call.cancel();
        signal.addEventListener('abort', cancel, { once: true });
        const finish = (error?: unknown) => {
          if (done) return;
          done = true;
          signal.removeEventListener('abort', cancel);
          if (error) reject(modalError(error, name, doing, signal));
          else resolve();
        };
        call.on('data', (message: Record<string, any>) => { // any: decoded protobuf
          try {
            if (onMessage(message) === true) {
              finish();
              call.cancel();
            }
          } catch (error) {
            finish(error);
            call.cancel();
          }
        });
        call.on('error', (error) => finish(error));
        call.on('end', () => finish());
      });
    },
  };
}
