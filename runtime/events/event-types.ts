// Webhook event types (DESIGN.md). Subscriptions filter on these; anything else is refused.
export const WEBHOOK_EVENT_TYPES = [
  'run.accepted',
  'run.waiting',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'entry.withdrawn',
  'agent.created',
  'agent.updated',
  'agent.archived',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
