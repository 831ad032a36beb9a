import type { ApiRouteSpec } from '../framework/index.js';
import { invitationRoutes } from './invitation-routes.js';
import { passwordResetRoutes } from './password-reset-routes.js';

/** Invitations and password reset: the identity flows that go through mail. */
export function invitationAndResetRoutes(): ApiRouteSpec[] {
  return [...invitationRoutes(), ...passwordResetRoutes()];
}
