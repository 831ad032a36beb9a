import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Standard Webhooks signing: the key is the base64-decoded part of the `whsec_` secret; the
// signature is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('not a whsec_ secret');
  return Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt: a fresh timestamp and signature, the stable id. */
export function webhookHeaders(secret: string, id: string, body: string, nowMs: number = Date.now()): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, id, timestamp, body) };
}

/** Verifies a `webhook-signature` header (space-separated `v1,…` entries), as a receiver would. */
export function verifyWebhookSignature(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The key-ring context of a subscription's secret: a ciphertext moved to another row fails. */
export function webhookSecretAad(workspaceId: string, subscriptionId: string): string {
  return JSON.stringify(['webhook-secret', workspaceId, subscriptionId]);
}
