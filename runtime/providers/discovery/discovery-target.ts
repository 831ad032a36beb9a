import type { KnownModelIndex } from './model-characteristics.js';
import type { DiscoveryOptions } from './vendor-request.js';

/** Where and as whom to list models: a provider's endpoint and decrypted credential. */
export interface DiscoveryTarget {
  /** Endpoint root; the type's default applies when absent (see listVendorModels). */
  readonly base_url?: string | undefined;
  readonly api_key?: string | undefined;
  /** The provider's extra headers, sent with the listing request too. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** The provider's config, for default URLs with placeholders (Azure's {resource_name}). */
  readonly config?: Readonly<Record<string, unknown>> | undefined;
}

/** What one family's lister receives: a resolved base URL and everything else it needs. */
export interface FamilyListing {
  readonly base_url: string;
  readonly api_key: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly secrets: readonly string[];
  readonly options: DiscoveryOptions;
  readonly index: KnownModelIndex;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export function numberField(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Upper bound on pages followed, so a vendor that repeats a page token cannot loop us. */
export const MAX_PAGES = 50;
