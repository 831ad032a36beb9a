import type { HttpServer, RoleStarter, Services } from '../runtime/index.js';
import { RateLimiter, registerRoutes, type ApiRouteSpec } from './framework/index.js';
import { identityRoutes } from './identity/index.js';

/** Every API route, in one table: the router and the OpenAPI document are built from it. */
export function apiRoutes(): ApiRouteSpec[] {
  return [...identityRoutes()];
}

export const startApi: RoleStarter = async (services: Services, server: HttpServer) => {
  const limiter = new RateLimiter(services.kv, services.config.auth.rate_limit_per_minute);
  registerRoutes(server, services, limiter, apiRoutes());
};
