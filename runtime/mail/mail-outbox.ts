import type { Queryable } from '../db/index.js';
import type { KeyRing } from '../keyring/index.js';
import { insertOutboxRow, newOutboxId, type OutboxRow } from '../stores/index.js';
import type { MailMessage } from './mail-message.js';

// Mail goes through the outbox (kind email) in the transaction that creates the link. The
// message holds a live link, so the row stores it sealed with the key ring (the AAD binds
// the row id): a database dump alone does not reveal usable links.

export interface MailPayload {
  to: string;
  template: MailMessage['template'];
  sealed: string;
}

const mailAad = (outboxId: string) => JSON.stringify(['outbox-mail', outboxId]);

export async function enqueueMail(tx: Queryable, keyring: KeyRing, workspaceId: string | null, message: MailMessage): Promise<OutboxRow> {
  const id = newOutboxId('email');
  const sealed = keyring.encrypt(JSON.stringify(message), mailAad(id));
  const payload: MailPayload = { to: message.to, template: message.template, sealed };
  return insertOutboxRow(tx, { id, kind: 'email', workspace_id: workspaceId, payload });
}

export function openMailPayload(keyring: KeyRing, row: Pick<OutboxRow, 'id' | 'payload'>): MailMessage {
  const payload = row.payload as MailPayload;
  return JSON.parse(keyring.decrypt(payload.sealed, mailAad(row.id)).toString('utf8')) as MailMessage;
}
