// Failures of a vendor model listing, as `{code, message}` so they cross any boundary (the
// API maps them to a provider error; a worker thread rebuilds them by code). Messages are
// built here from status codes and vendor error text with the credential removed; they
// never contain the API key.

export const DISCOVERY_ERROR_CODES = [
  'unauthenticated', // 401 / 403: the key is wrong, revoked or lacks permission
  'upstream_unavailable', // network failure, timeout, 429, 5xx
  'protocol_error', // a response that is not the vendor's listing format
  'unsupported', // the type has no listing endpoint (bedrock, vertex, chatgpt login)
] as const;
export type DiscoveryErrorCode = (typeof DISCOVERY_ERROR_CODES)[number];

export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
  constructor(
    readonly code: DiscoveryErrorCode,
    message: string,
  ) {
    super(message);
  }

  toJSON(): { code: DiscoveryErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function isDiscoveryError(error: unknown): error is DiscoveryError {
  return error instanceof DiscoveryError;
}
