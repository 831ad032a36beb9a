import type { Queryable } from '../db/index.js';
import { newId } from '../ids/index.js';
import { insertOutboxRow, listSubscriptionIdsForEvent } from '../stores/index.js';
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
 */
export async function publishEvent(tx: Queryable, event: { workspace_id: string; type: WebhookEventType; data: unknown }): Promise<PublishedEvent> {
  const subscriptionIds = await listSubscriptionIdsForEvent(tx, event.workspace_id, event.type);
  const eventId = newId(EVENT_ID_PREFIX);
  if (subscriptionIds.length === 0) return { event_id: eventId, delivery_ids: [] };
  const body = JSON.stringify({ id: eventId, type: event.type, created_at: new Date().toISOString(), workspace_id: event.workspace_id, data: event.data ?? null });
  const payload: WebhookPayload = { event_id: eventId, body };
  const deliveryIds: string[] = [];
  for (const subscriptionId of subscriptionIds) {
    const row = await insertOutboxRow(tx, { kind: 'webhook', workspace_id: event.workspace_id, subscription_id: subscriptionId, event_type: event.type, payload });
    deliveryIds.push(row.id);
  }
  return { event_id: eventId, delivery_ids: deliveryIds };
}
