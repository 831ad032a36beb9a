import { Type, type Static } from '@sinclair/typebox';

// The sweeps of spec 1.4, in the spec's order.
export const SWEEP_NAMES = [
  'advance_threads',
  'expire_leases',
  'expire_credentials',
  'maintain_environments',
  'renew_environments',
  'recover_connection_operations',
  'deliver_outbox',
  'purge_outbox',
] as const;
export type SweepName = (typeof SWEEP_NAMES)[number];

const job = <N extends SweepName>(type: N) => Type.Object({ type: Type.Literal(type) }, { additionalProperties: false });

/** The payload of a sweep's pg-boss job, tagged by the sweep it runs. */
export const SweepJob = Type.Union([
  job('advance_threads'),
  job('expire_leases'),
  job('expire_credentials'),
  job('maintain_environments'),
  job('renew_environments'),
  job('recover_connection_operations'),
  job('deliver_outbox'),
  job('purge_outbox'),
]);
export type SweepJob = Static<typeof SweepJob>;

/** pg-boss queue of a sweep (one queue each, so the passes of one sweep never overlap). */
export function sweepQueue(name: SweepName): string {
  return `svc-${name.replaceAll('_', '-')}`;
}
