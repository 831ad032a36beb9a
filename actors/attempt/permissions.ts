// Permission resolution for tool calls. A tool's own setting wins; `inherit` (or no setting)
// defers to its toolset's `config.permission`; with neither, the call is allowed. The result
// is never `inherit`, so the loop only ever decides between run, ask and refuse.
import type { Permission } from './agent-config.js';

export type EffectivePermission = Exclude<Permission, 'inherit'>;

export function resolvePermission(own: Permission | undefined, inherited: unknown): EffectivePermission {
  if (own !== undefined && own !== 'inherit') return own;
  return isEffective(inherited) ? inherited : 'allow';
}

function isEffective(value: unknown): value is EffectivePermission {
  return value === 'allow' || value === 'ask' || value === 'deny';
}
