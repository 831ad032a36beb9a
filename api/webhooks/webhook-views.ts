import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES, type OutboxRow, type Services } from '../../runtime/index.js';
import { NullableTimestamp, Timestamp } from '../schemas/index.js';

export const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: `event type: ${WEBHOOK_EVENT_TYPES.join(', ')}` },
);
export const EventTypes = Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true });
export const WebhookUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL (plain http only for origins in providers.allowed_http_origins)' });
export const Description = Type.String({ maxLength: 1000 });

export const SubscriptionView = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.String(),
    enabled: Type.Boolean(),
    created_by_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer(),
  },
  { $id: 'Subscription' },
);

export const DeliveryView = Type.Object(
  {
    id: Type.String({ description: 'the delivery id, sent as webhook-id (stable across retries and redeliveries)' }),
    subscription_id: Type.Union([Type.String(), Type.Null()]),
    event_id: Type.Union([Type.String(), Type.Null()]),
    event_type: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')]),
    dead: Type.Boolean(),
    attempts: Type.Integer(),
    max_attempts: Type.Integer(),
    next_attempt_at: NullableTimestamp,
    last_attempt_at: NullableTimestamp,
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    last_response: Type.Union([Type.String({ description: 'the first 4 KiB of the last response body' }), Type.Null()]),
    created_at: Timestamp,
    settled_at: NullableTimestamp,
  },
  { $id: 'WebhookDelivery' },
);

export function deliveryView(row: OutboxRow, services: Services) {
  const payload = (row.payload ?? {}) as { event_id?: string };
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    event_id: payload.event_id ?? null,
    event_type: row.event_type,
    state: row.state,
    dead: row.state === 'dead',
    attempts: row.attempts,
    max_attempts: services.loaded.outbox.webhook.max_attempts,
    next_attempt_at: row.state === 'pending' ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_response: row.last_response,
    created_at: row.created_at,
    settled_at: row.settled_at,
  };
}
