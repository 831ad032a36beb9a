import {
  checkWebhookUrl,
  getSubscriptionTarget,
  webhookHeaders,
  webhookSecretAad,
  type DeliveryOutcome,
  type OutboxHandler,
  type WebhookPayload,
} from '../runtime/index.js';

/** Response bytes kept for inspection (GET /deliveries/{id}); the rest is discarded unread. */
export const RESPONSE_BYTES_KEPT = 4096;

async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Stop reading (and let the connection go) once the cap is reached.
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/**
 * POSTs the stored body to the subscription's current URL, signed per Standard Webhooks:
 * webhook-id is the delivery id (stable across retries and redeliveries), the timestamp and
 * signature are fresh per attempt. Redirects are not followed (a 3xx is a failure); only a
 * 2xx succeeds; the attempt is bounded by the context's timeout.
 */
export const deliverWebhook: OutboxHandler = async (row, { services, signal }): Promise<DeliveryOutcome> => {
  if (!row.workspace_id || !row.subscription_id) return { type: 'failed', error: 'webhook row without a subscription' };
  const target = await getSubscriptionTarget(services.pool, row.workspace_id, row.subscription_id);
  if (!target) return { type: 'failed', error: 'subscription deleted' };
  try {
    checkWebhookUrl(target.url, services.config); // the policy may have changed since the subscription was saved
  } catch (error) {
    return { type: 'failed', error: `URL refused by the endpoint policy: ${(error as Error).message}` };
  }
  const secret = services.keyring.decrypt(target.secret_ciphertext, webhookSecretAad(row.workspace_id, row.subscription_id)).toString('utf8');
  const { body } = row.payload as WebhookPayload;
  let response: Response;
  try {
    response = await fetch(target.url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: { 'content-type': 'application/json', 'user-agent': 'svc-service-webhooks/1', ...webhookHeaders(secret, row.id, body) },
      body,
    });
  } catch (error) {
    const reason = signal.aborted ? 'timed out' : ((error as Error & { cause?: Error }).cause?.message ?? (error as Error).message);
    return { type: 'failed', error: `request failed: ${reason}` };
  }
  const text = await readCapped(response, RESPONSE_BYTES_KEPT).catch(() => '');
  if (response.status >= 200 && response.status < 300) return { type: 'delivered', status_code: response.status, response: text };
  const error = response.status >= 300 && response.status < 400 ? `redirect (${response.status}) not followed` : `receiver answered ${response.status}`;
  return { type: 'failed', error, status_code: response.status, response: text };
};
