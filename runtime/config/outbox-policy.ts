import { Type, type Static } from '@sinclair/typebox';

// Spec 8, "Outbox policy". Per-kind overrides inherit every field they leave out from the
// defaults; unknown fields and kinds fail startup (additionalProperties: false).
export const OUTBOX_KINDS = ['webhook', 'email', 'child_result', 'memory_purge', 'checkpoint_cleanup'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

export const OUTBOX_POLICY_DEFAULTS = {
  purge_interval_seconds: 60,
  purge_batch: 1000,
  purge_budget_seconds: 5,
  delivered_retention_seconds: 86400,
  dead_retention_seconds: 1209600,
  max_attempts: 12,
  batch: 32,
  parallel: 8,
  lease_seconds: 60,
  backlog_count: 10000,
  backlog_age_seconds: 300,
  backlog_alert_seconds: 300,
} as const;

const positive = (description: string) => Type.Integer({ minimum: 1, description });
const nonNegative = (description: string) => Type.Integer({ minimum: 0, description });

export const OutboxPolicyPatch = Type.Object(
  {
    purge_interval_seconds: Type.Optional(positive('seconds between purge passes')),
    purge_batch: Type.Optional(positive('rows deleted per short transaction')),
    purge_budget_seconds: Type.Optional(positive('time budget of one purge pass')),
    delivered_retention_seconds: Type.Optional(nonNegative('how long delivered rows are kept')),
    dead_retention_seconds: Type.Optional(nonNegative('how long dead rows are kept')),
    max_attempts: Type.Optional(positive('attempts before a delivery is marked dead')),
    batch: Type.Optional(positive('rows claimed per sender pass')),
    parallel: Type.Optional(positive('deliveries in flight at once')),
    lease_seconds: Type.Optional(positive('claim lease of a batch')),
    backlog_count: Type.Optional(positive('pending rows that raise the backlog alert')),
    backlog_age_seconds: Type.Optional(positive('age of the oldest pending row that counts as backlog')),
    backlog_alert_seconds: Type.Optional(nonNegative('how long the backlog must last before the alert')),
  },
  { additionalProperties: false },
);
export type OutboxPolicyPatch = Static<typeof OutboxPolicyPatch>;
export type OutboxPolicy = { -readonly [K in keyof typeof OUTBOX_POLICY_DEFAULTS]: number };

export const OutboxConfig = Type.Object(
  {
    defaults: Type.Optional(OutboxPolicyPatch),
    by_kind: Type.Optional(
      Type.Object(
        {
          webhook: Type.Optional(OutboxPolicyPatch),
          email: Type.Optional(OutboxPolicyPatch),
          child_result: Type.Optional(OutboxPolicyPatch),
          memory_purge: Type.Optional(OutboxPolicyPatch),
          checkpoint_cleanup: Type.Optional(OutboxPolicyPatch),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);
export type OutboxConfig = Static<typeof OutboxConfig>;

/** Resolves the effective policy of every kind: built-in defaults ← defaults ← by_kind[kind]. */
export function resolveOutboxPolicies(config: OutboxConfig): Record<OutboxKind, OutboxPolicy> {
  const base: OutboxPolicy = { ...OUTBOX_POLICY_DEFAULTS, ...(config.defaults ?? {}) };
  const out = {} as Record<OutboxKind, OutboxPolicy>;
  for (const kind of OUTBOX_KINDS) out[kind] = Object.freeze({ ...base, ...(config.by_kind?.[kind] ?? {}) });
  return Object.freeze(out);
}
