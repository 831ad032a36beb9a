import type { EngineHooks, EngineOutboxKind, MailTransport, OutboxHandler, OutboxHandlers } from '../runtime/index.js';
import { deleteCheckpointObjects } from './checkpoint-cleanup.js';
import { emailHandler } from './email-delivery.js';
import { deliverWebhook } from './webhook-delivery.js';

/**
 * Until the run engine supplies a handler for its kind, a row of that kind is marked
 * delivered with a log line (nothing else consumes it yet).
 */
function placeholder(kind: EngineOutboxKind): OutboxHandler {
  return async (row, { services }) => {
    services.logger.info({ outbox_id: row.id, kind, workspace_id: row.workspace_id }, 'no handler installed for this outbox kind; marked delivered');
    return { type: 'delivered' };
  };
}

export function createOutboxHandlers(engine: EngineHooks, transport: MailTransport): OutboxHandlers {
  return {
    webhook: deliverWebhook,
    email: emailHandler(transport),
    checkpoint_cleanup: deleteCheckpointObjects,
    child_result: engine.outbox.child_result ?? placeholder('child_result'),
    memory_purge: engine.outbox.memory_purge ?? placeholder('memory_purge'),
  };
}
