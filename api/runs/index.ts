import type { ApiRouteSpec } from '../framework/index.js';
import { continuationRoutes } from './continuation-routes.js';
import { inboxRoutes } from './inbox-routes.js';
import { runRoutes } from './run-routes.js';
import { sessionRoutes } from './session-routes.js';

export function runEngineRoutes(): ApiRouteSpec[] {
  return [...sessionRoutes(), ...inboxRoutes(), ...runRoutes(), ...continuationRoutes()];
}
