import type { LoadedConfig } from '../config/index.js';
import { AppError } from '../errors/index.js';
import { checkEndpoint } from '../providers/index.js';

/**
 * Checks a subscription URL against the deployment's outbound endpoint policy (https, or
 * plain http to an origin in providers.allowed_http_origins); 400 naming the field otherwise.
 */
export function checkWebhookUrl(url: string, config: LoadedConfig['config']): string {
  const checked = checkEndpoint(url, { allowedHttpOrigins: config.providers.allowed_http_origins });
  if (!checked.ok) throw new AppError('invalid_argument', `body.url: ${checked.reason}`, { details: { field: 'body.url', reason: checked.code } });
  return url;
}
