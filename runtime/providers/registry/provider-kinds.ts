// The five provider kinds of spec 2.13; each has its own collection (/model-providers, …)
// and its own table of installed types.
export const PROVIDER_KINDS = ['model', 'web', 'environment', 'connector', 'memory'] as const;

export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export function isProviderKind(value: unknown): value is ProviderKind {
  return typeof value === 'string' && (PROVIDER_KINDS as readonly string[]).includes(value);
}
