import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level (undefined members dropped): equal content gives
 * equal text whatever order a client sent the keys in. The same rule as the API's canonical
 * JSON; repeated here because runtime/ may not import api/.
 */
export function canonicalJsonText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const contentSha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** A revision digest: SHA-256 hex of the canonical JSON of the validated content. */
export const contentDigest = (content: unknown): string => contentSha256(canonicalJsonText(content));
