import type { ApiRouteSpec } from '../framework/index.js';
import { apiKeyRoutes } from './api-key-routes.js';
import { authRoutes } from './auth-routes.js';
import { memberAndAuditRoutes } from './member-routes.js';
import { workspaceRoutes } from './workspace-routes.js';

export function identityRoutes(): ApiRouteSpec[] {
  return [...authRoutes(), ...workspaceRoutes(), ...apiKeyRoutes(), ...memberAndAuditRoutes()];
}
