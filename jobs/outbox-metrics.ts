import { Counter, Gauge, type Registry } from 'prom-client';
import { OUTBOX_KINDS, type OutboxKind } from '../runtime/index.js';

export interface OutboxMetrics {
  readonly backlogAlert: Gauge<'kind'>;
  readonly dead: Gauge<'kind'>;
  readonly pending: Gauge<'kind'>;
  readonly deliveries: Counter<'kind' | 'outcome'>;
}

function gauge(registry: Registry, name: string, help: string): Gauge<'kind'> {
  return (registry.getSingleMetric(name) as Gauge<'kind'> | undefined) ?? new Gauge({ name, help, labelNames: ['kind'], registers: [registry] });
}

/**
 * The outbox metrics on the process's registry (spec 6.5: take the maximum across replicas).
 * Idempotent per registry, so tests may build several job contexts on one process.
 */
export function outboxMetrics(registry: Registry): OutboxMetrics {
  const fresh = registry.getSingleMetric('svc_outbox_dead') === undefined;
  const metrics: OutboxMetrics = {
    backlogAlert: gauge(registry, 'svc_outbox_backlog_alert', '1 while the kind has had a backlog (count or age) for backlog_alert_seconds'),
    dead: gauge(registry, 'svc_outbox_dead', '1 while dead deliveries of the kind exist'),
    pending: gauge(registry, 'svc_outbox_pending', 'pending deliveries of the kind'),
    deliveries:
      (registry.getSingleMetric('svc_outbox_deliveries_total') as Counter<'kind' | 'outcome'> | undefined) ??
      new Counter({ name: 'svc_outbox_deliveries_total', help: 'delivery attempts by outcome (delivered, failed, dead)', labelNames: ['kind', 'outcome'], registers: [registry] }),
  };
  for (const kind of fresh ? OUTBOX_KINDS : []) {
    metrics.backlogAlert.labels({ kind }).set(0);
    metrics.dead.labels({ kind }).set(0);
  }
  return metrics;
}

export type DeliveryCounterOutcome = 'delivered' | 'failed' | 'dead';

export function countDelivery(metrics: OutboxMetrics, kind: OutboxKind, outcome: DeliveryCounterOutcome): void {
  metrics.deliveries.inc({ kind, outcome });
}
