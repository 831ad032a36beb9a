import { deleteDeadLoginSessions, deleteDeadMailLinks, deleteExpiredInvitations, purgeIdempotencyKeys, type Queryable } from '../runtime/index.js';
import type { JobContext } from './job-context.js';

export const CREDENTIAL_BATCH = 1000;
/** Batches per table per pass: the pass is bounded; what is left waits for the next one. */
export const CREDENTIAL_MAX_BATCHES = 10;

export interface ExpireCredentialsSummary {
  login_sessions: number;
  mail_links: number;
  invitations: number;
  idempotency_keys: number;
}

async function drain(db: Queryable, remove: (db: Queryable, limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < CREDENTIAL_MAX_BATCHES; i++) {
    const deleted = await remove(db, CREDENTIAL_BATCH);
    total += deleted;
    if (deleted < CREDENTIAL_BATCH) break;
  }
  return total;
}

/**
 * expire_credentials: deletes expired or revoked login sessions, used or expired mail links,
 * unaccepted invitations past their expiry, and idempotency records past their retention.
 * Each batch is one short statement; deleting what is already gone is a no-op (idempotent).
 */
export async function expireCredentials(context: JobContext): Promise<ExpireCredentialsSummary> {
  const { pool, logger } = context.services;
  const summary: ExpireCredentialsSummary = {
    login_sessions: await drain(pool, deleteDeadLoginSessions),
    mail_links: await drain(pool, deleteDeadMailLinks),
    invitations: await drain(pool, deleteExpiredInvitations),
    idempotency_keys: await drain(pool, purgeIdempotencyKeys),
  };
  if (Object.values(summary).some((n) => n > 0)) logger.info(summary, 'expired credentials deleted');
  return summary;
}
