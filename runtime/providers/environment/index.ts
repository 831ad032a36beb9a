// Public API of the environment types' clients (runtime/providers/environment): one client per
// type, each speaking its vendor's API. runtime/environments drives them.
export * from './environment-client.js';
export { ENVIRONMENT_CLIENTS, environmentClientFactory, skillPackagesRoot } from './environment-clients.js';
export { captureBuffer, OutputCapture } from './output-capture.js';
export { dockerEnvironmentClient } from './docker/index.js';
export { localEnvironmentClient } from './local/index.js';
export { runloopEnvironmentClient } from './runloop/index.js';
export { LIST_SCRIPT, listArgv, listCommand, inDirectory, shellQuote, parseListing } from './shell-listing.js';
export { daytonaEnvironmentClient } from './daytona/index.js';
export { EXEC_WRAPPER, TREE_KILLER } from './process-kill.js';
export { e2bEnvironmentClient, connectEnvelope } from './e2b/index.js';
export { vercelEnvironmentClient } from './vercel/index.js';
export { tarOneFile, firstTarEntry, tarEntryContent } from './tar-entry.js';
export { cloudflareEnvironmentClient } from './cloudflare/index.js';
export { modalEnvironmentClient, MODAL_WORKDIR, MODAL_PROTO, MODAL_SERVICE, modalMethods, encodeMessage, decodeMessage } from './modal/index.js';
