import type { MemberRole } from '../stores/index.js';

export const PERMISSIONS = ['read', 'write', 'run', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

// Roles map onto permission sets (DESIGN.md): admin ⊃ member ⊃ viewer.
export const ROLE_PERMISSIONS: Readonly<Record<MemberRole, readonly Permission[]>> = {
  admin: ['read', 'write', 'run', 'admin'],
  member: ['read', 'write', 'run'],
  viewer: ['read'],
};
/** The permission set of each role, built once (principals share them; never mutated). */
export const ROLE_PERMISSION_SETS: Readonly<Record<MemberRole, ReadonlySet<Permission>>> = {
  admin: new Set(ROLE_PERMISSIONS.admin),
  member: new Set(ROLE_PERMISSIONS.member),
  viewer: new Set(ROLE_PERMISSIONS.viewer),
};
const RANK: Readonly<Record<MemberRole, number>> = { viewer: 0, member: 1, admin: 2 };

export function lowerRole(a: MemberRole, b: MemberRole): MemberRole {
  return RANK[a] <= RANK[b] ? a : b;
}

export function roleAtMost(role: MemberRole, ceiling: MemberRole): boolean {
  return RANK[role] <= RANK[ceiling];
}

/** Who is calling, resolved from the credential on every request. */
export interface Principal {
  kind: 'api_key' | 'user';
  /** The principal's id: the key id for API keys, the user id for login sessions. */
  id: string;
  /** The acting user (an API key's creator). */
  user_id: string;
  organization_id: string;
  organization_role: 'admin' | 'member';
  /** Null only for a login session on a route that takes no workspace. */
  workspace_id: string | null;
  role: MemberRole | null;
  permissions: ReadonlySet<Permission>;
  session_id?: string;
  api_key_id?: string;
}
