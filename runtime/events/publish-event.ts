import type { Queryable } from '../db/index.js';
import { newId } from '../ids/index.js';
import { readSubscriptionFilters, type ReadCaches } from '../cache/index.js';
import { insertOutboxRow } from '../stores/index.js';
import type { WebhookEventType } from './event-types.js';

export const EVENT_ID_PREFIX = 'evt';

export interface PublishedEvent {
  event_id: string;
  /** One webhook delivery (outbox row) per matching subscription. */
  delivery_ids: string[];
}

/** What a webhook outbox row carries: the exact body, so every retry sends the same bytes. */
export interface WebhookPayload {
  event_id: string;
  body: string;
}

/**
 * Announces an event to the workspace's webhook subscriptions: one outbox row per enabled
 * subscription whose filter names the type, written with `tx` so the deliveries commit (or
 * roll back) with the change they announce. Body: {id, type, created_at, workspace_id, data}.
 *
 * With `caches` (without, the same index is read from the table), the subscriptions come from the read cache's per-workspace index (no
 * statement at all when the workspace has none). The bound is the cache's: a subscription
 * created, changed or deleted in this process is seen by the next event here at once, in
 * another process within the pub/sub delay; while Redis is lost every event reads the table.
 * `data` may be a promise (a row whose statement is still in flight in the same pipeline): it
 * is awaited only when a subscription wants the event.
 */
export async function publishEvent(
  tx: Queryable,
  event: { workspace_id: string; type: WebhookEventType; data: unknown },
  options: { caches?: ReadCaches | undefined } = {},
): Promise<PublishedEvent> {
  const subscriptionIds = await subscriptionsWanting(options.caches, tx, event.workspace_id, event.type);
  const eventId = newId(EVENT_ID_PREFIX);
  if (subscriptionIds.length === 0) {
    // Unused: its rejection is the caller's to see through its own promise of the row.
    if (event.data instanceof Promise) event.data.catch(() => undefined);
    return { event_id: eventId, delivery_ids: [] };
  }
  const body = JSON.stringify({ id: eventId, type: event.type, created_at: new Date().toISOString(), workspace_id: event.workspace_id, data: (await event.data) ?? null });
  const payload: WebhookPayload = { event_id: eventId, body };
  const deliveryIds: string[] = [];
  for (const subscriptionId of subscriptionIds) {
    const row = await insertOutboxRow(tx, { kind: 'webhook', workspace_id: event.workspace_id, subscription_id: subscriptionId, event_type: event.type, payload });
    deliveryIds.push(row.id);
  }
  return { event_id: eventId, delivery_ids: deliveryIds };
}

/**
 * The enabled subscriptions of the workspace whose filter names the event type, as publishEvent
 * reads them (the read cache's index when `caches` is given). Also asked before a transaction
 * that would publish the event, to know whether it will need an outbox row (the inbox POST's
 * one statement, the two-round-trip seal): the same bound as publishEvent's own read.
 */
export async function subscriptionsWanting(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, type: WebhookEventType): Promise<string[]> {
  return (await readSubscriptionFilters(caches, db, workspaceId)).filter((s) => s.events.includes(type)).map((s) => s.id);
}
