import type { Queryable } from '../db/index.js';
import {
  findApiKeyBySecretHash,
  findLiveSessionByTokenHash,
  getAgent,
  getAgentRevision,
  getMembership,
  getModel,
  getProviderWithCredential,
  listEnabledSubscriptionFilters,
  type SubscriptionFilter,
  type AgentRevisionRow,
  type AgentRow,
  type ApiKeyCredential,
  type Membership,
  type Model,
  type ProviderKindName,
  type ProviderWithCredential,
  type SessionCredential,
} from '../stores/index.js';
import { tagOf, type ReadCaches } from './read-caches.js';

// Read-through helpers: each reads its row from the cache when given one and live, else from
// the database, exactly like the store function it wraps. Keys hold no workspace where the id
// is global: a hit is then accepted only for the request's workspace (another workspace's
// resource reads the database, which answers null, so it stays 404).

/** An API key by the SHA-256 of its secret (revoked keys are not found and not cached). */
export function readApiKeyCredential(caches: ReadCaches | undefined, db: Queryable, secretHash: Buffer): Promise<ApiKeyCredential | null> {
  if (!caches) return findApiKeyBySecretHash(db, secretHash);
  return caches.read(
    `k:${secretHash.toString('base64')}`,
    () => findApiKeyBySecretHash(db, secretHash),
    // Dropped by a revoke of the key, by any change of its creator (disable, enable), and by a
    // change of the creator's membership in the key's workspace (its role caps the key's).
    (found) => ({ tags: [tagOf('api_key', found.key.id), tagOf('user', found.key.created_by_id), tagOf('membership', `${found.key.workspace_id}:${found.key.created_by_id}`)] }),
  );
}

/** A live login session by the SHA-256 of its token; the entry ends when the session expires. */
export function readSessionCredential(caches: ReadCaches | undefined, db: Queryable, tokenHash: Buffer): Promise<SessionCredential | null> {
  if (!caches) return findLiveSessionByTokenHash(db, tokenHash);
  return caches.read(
    `s:${tokenHash.toString('base64')}`,
    () => findLiveSessionByTokenHash(db, tokenHash),
    (session) => ({ tags: [tagOf('session', session.session_id), tagOf('user', session.user_id)], expiresAt: Date.parse(session.expires_at) }),
  );
}

/** A user's membership of a workspace (absence is not cached: joining takes effect at once). */
export function readMembership(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, userId: string): Promise<Membership | null> {
  if (!caches) return getMembership(db, workspaceId, userId);
  return caches.read(
    `m:${workspaceId}:${userId}`,
    () => getMembership(db, workspaceId, userId),
    () => ({ tags: [tagOf('user', userId), tagOf('membership', `${workspaceId}:${userId}`)] }),
  );
}

/** An agent head of the workspace. */
export function readAgent(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, id: string): Promise<AgentRow | null> {
  if (!caches) return getAgent(db, workspaceId, id);
  return caches.read(`a:${id}`, () => getAgent(db, workspaceId, id), (agent) => ({ tags: [tagOf('agent', agent.id)] }), (agent) => agent.workspace_id === workspaceId);
}

/** A revision of the agent in the workspace. Revisions are immutable: no change drops one. */
export function readAgentRevision(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, agentId: string, id: string): Promise<AgentRevisionRow | null> {
  if (!caches) return getAgentRevision(db, workspaceId, agentId, id);
  return caches.read(
    `r:${id}`,
    () => getAgentRevision(db, workspaceId, agentId, id),
    () => ({ tags: [] }),
    (revision) => revision.workspace_id === workspaceId && revision.agent_id === agentId,
  );
}

/** A model of the workspace by key. */
export function readModel(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, key: string): Promise<Model | null> {
  if (!caches) return getModel(db, workspaceId, key);
  return caches.read(`mo:${workspaceId}:${key}`, () => getModel(db, workspaceId, key), () => ({ tags: [tagOf('model', `${workspaceId}:${key}`)] }));
}

/** A provider of the workspace with its sealed credential (decrypted only by the caller). */
export function readProviderWithCredential(caches: ReadCaches | undefined, db: Queryable, workspaceId: string, id: string, kind?: ProviderKindName): Promise<ProviderWithCredential | null> {
  if (!caches) return getProviderWithCredential(db, workspaceId, id, kind);
  return caches.read(
    `p:${id}`,
    () => getProviderWithCredential(db, workspaceId, id),
    (found) => ({ tags: [tagOf('provider', found.provider.id)] }),
    (found) => found.provider.workspace_id === workspaceId,
  ).then((found) => (found && (kind === undefined || found.provider.kind === kind) ? found : null));
}

/**
 * The workspace's enabled webhook subscriptions with their event filters: every run's accept
 * and seal announce an event, and most workspaces have no subscription, so the index is read
 * once and kept (an empty one too). Any write of a subscription of the workspace drops it.
 */
export function readSubscriptionFilters(caches: ReadCaches | undefined, db: Queryable, workspaceId: string): Promise<SubscriptionFilter[]> {
  if (!caches) return listEnabledSubscriptionFilters(db, workspaceId);
  return caches
    .read(`sub:${workspaceId}`, () => listEnabledSubscriptionFilters(db, workspaceId), () => ({ tags: [tagOf('subscription', workspaceId)] }))
    .then((found) => found ?? []);
}
