import { hash } from 'node:crypto';
import { readApiKeyCredential, readMembership, readSessionCredential, type ReadCaches } from '../cache/index.js';
import type { Queryable } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { touchApiKey } from '../stores/index.js';
import { lowerRole, ROLE_PERMISSION_SETS, type Principal } from './principal.js';

export const API_KEY_PREFIX = 'svk_';
export const SESSION_TOKEN_PREFIX = 'svs_';

export function hashSecret(secret: string): Buffer {
  // one-shot hash: half the cost of createHash().update().digest(), on every request
  return hash('sha256', secret, 'buffer');
}

const unauthenticated = (message: string) => new AppError('unauthenticated', message);

function bearerToken(header: string | undefined): string {
  if (!header) throw unauthenticated('missing credential: send Authorization: Bearer <token>');
  const match = /^Bearer +([!-~]{8,512})$/i.exec(header.trim());
  if (!match) throw unauthenticated('malformed Authorization header: expected the Bearer scheme');
  return match[1]!;
}

/**
 * Resolves the request credential to a principal. With `cache` (the process's credential
 * cache), the key, session and membership rows come from memory when cached: a revoke, logout,
 * disable or role change committed by this process drops them before its response, one
 * committed elsewhere within the pub/sub delay, and while Redis is lost the cache is bypassed,
 * so a revoked key, an expired or revoked session and a disabled user still stop working on the
 * very next request then (ReadCaches states the whole rule). Without `cache` every request
 * reads the database.
 * - API key: acts in its own workspace; naming another one in X-Workspace-ID is 403; its role
 *   is capped by its creator's current role (a creator who left the workspace voids the key).
 * - Login session: acts in the workspace named by X-Workspace-ID (required where the route
 *   takes a workspace); a workspace the user is not a member of answers 404.
 */
export async function authenticate(
  db: Queryable,
  headers: { authorization?: string | undefined; workspace?: string | undefined },
  options: { workspaceRequired: boolean; cache?: ReadCaches | undefined },
): Promise<Principal> {
  const token = bearerToken(headers.authorization);
  const { cache } = options;
  if (token.startsWith(API_KEY_PREFIX)) {
    const found = await readApiKeyCredential(cache, db, hashSecret(token));
    if (!found || found.user_disabled || !found.creator_role) throw unauthenticated('invalid or revoked API key');
    if (headers.workspace !== undefined && headers.workspace !== found.key.workspace_id) {
      throw new AppError('forbidden', 'an API key acts only in its own workspace');
    }
    // last_used_at is recorded at most once a minute per key, decided in process (the row read
    // seeds it): a request served from the cache costs no round trip.
    const lastUsed = found.key.last_used_at === null ? 0 : Date.parse(found.key.last_used_at);
    const touch = cache ? cache.shouldTouch(found.key.id, lastUsed) : Date.now() - lastUsed > 60_000;
    if (touch) void touchApiKey(db, found.key.id).catch(() => undefined);
    const role = lowerRole(found.key.role, found.creator_role);
    return {
      kind: 'api_key',
      id: found.key.id,
      user_id: found.key.created_by_id,
      organization_id: found.organization_id,
      organization_role: 'member',
      workspace_id: found.key.workspace_id,
      role,
      permissions: ROLE_PERMISSION_SETS[role],
      api_key_id: found.key.id,
    };
  }
  if (token.startsWith(SESSION_TOKEN_PREFIX)) {
    const session = await readSessionCredential(cache, db, hashSecret(token));
    if (!session || session.user_disabled) throw unauthenticated('invalid, expired or revoked session');
    const base = {
      kind: 'user' as const,
      id: session.user_id,
      user_id: session.user_id,
      organization_id: session.organization_id,
      organization_role: session.organization_role,
      session_id: session.session_id,
    };
    if (headers.workspace === undefined) {
      if (options.workspaceRequired) throw new AppError('invalid_argument', 'X-Workspace-ID is required with a login session');
      return { ...base, workspace_id: null, role: null, permissions: new Set() };
    }
    const membership = await readMembership(cache, db, headers.workspace, session.user_id);
    if (!membership) throw new AppError('not_found', 'workspace not found');
    return { ...base, workspace_id: membership.workspace_id, role: membership.role, permissions: ROLE_PERMISSION_SETS[membership.role] };
  }
  throw unauthenticated('unknown credential type');
}
