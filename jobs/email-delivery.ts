import { openMailPayload, type MailTransport, type OutboxHandler } from '../runtime/index.js';

/** Sends an identity mail (kind email) through the process's transport (SMTP or log). */
export function emailHandler(transport: MailTransport): OutboxHandler {
  return async (row, { services }) => {
    const message = openMailPayload(services.keyring, row);
    await transport.send(message);
    return { type: 'delivered' };
  };
}
