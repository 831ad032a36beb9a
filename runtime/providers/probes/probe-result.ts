// The body of POST /{kind}-providers/{id}/test (spec 4, row 22; spec 7): a probe that could
// not reach or convince the vendor is a result, not an error.
export type ProbeResult =
  | { readonly result: 'succeeded' }
  | { readonly result: 'failed'; readonly message: string }
  | { readonly result: 'unsupported' };

export const succeeded = (): ProbeResult => ({ result: 'succeeded' });
export const failed = (message: string): ProbeResult => ({ result: 'failed', message });
export const unsupported = (): ProbeResult => ({ result: 'unsupported' });

/** What every probe gets: the stored configuration, decrypted, and a time budget. */
export interface ProbeBudget {
  /** Budget of the whole probe; defaults to DEFAULT_PROBE_TIMEOUT_MS. */
  readonly timeout_ms?: number;
  readonly signal?: AbortSignal;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/** Removes every secret from a message that may quote vendor text. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Very short values would blank out ordinary words; they are not credentials anyway.
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}
