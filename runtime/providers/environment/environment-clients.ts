// The environment types this build can run, by provider type. A template (and so an
// environment) is accepted only for a type listed here: a registered type without a client
// is refused when a template names it, never accepted and then failing in a run. `modal`
// speaks Modal's gRPC API (modal/modal-grpc.ts); every other hosted type its HTTP API.
import type { EnvironmentClientFactory } from './environment-client.js';
import { cloudflareEnvironmentClient } from './cloudflare/index.js';
import { daytonaEnvironmentClient } from './daytona/index.js';
import { dockerEnvironmentClient } from './docker/index.js';
import { e2bEnvironmentClient } from './e2b/index.js';
import { localEnvironmentClient } from './local/index.js';
import { modalEnvironmentClient } from './modal/index.js';
import { runloopEnvironmentClient } from './runloop/index.js';
import { vercelEnvironmentClient } from './vercel/index.js';

export const ENVIRONMENT_CLIENTS: Readonly<Record<string, EnvironmentClientFactory>> = Object.freeze({
  local: localEnvironmentClient,
  docker: dockerEnvironmentClient,
  runloop: runloopEnvironmentClient,
  daytona: daytonaEnvironmentClient,
  e2b: e2bEnvironmentClient,
  'vercel-sandbox': vercelEnvironmentClient,
  'cloudflare-sandbox': cloudflareEnvironmentClient,
  modal: modalEnvironmentClient,
});

/**
 * Where a type's environments hold the run's skill packages (TOOLS.md "Skills in runs":
 * /skills/<name>/). The Cloudflare bridge reaches nothing outside /workspace, so its packages
 * go to /workspace/.skills; the prompt names the folder either way.
 */
export function skillPackagesRoot(type: string): string {
  return type === 'cloudflare-sandbox' ? '/workspace/.skills' : '/skills';
}

export function environmentClientFactory(type: string): EnvironmentClientFactory | undefined {
  return Object.hasOwn(ENVIRONMENT_CLIENTS, type) ? ENVIRONMENT_CLIENTS[type] : undefined;
}
