// Webhook events: the event types, publishEvent (outbox rows in the caller's transaction),
// Standard Webhooks signing and the subscription URL policy.
export * from './event-types.js';
export * from './webhook-signature.js';
export * from './webhook-url.js';
export * from './publish-event.js';
