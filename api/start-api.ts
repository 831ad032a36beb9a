import type { HttpServer, RoleStarter, Services } from '../runtime/index.js';
import { RateLimiter, registerRoutes, type ApiRouteSpec } from './framework/index.js';
import { identityRoutes } from './identity/index.js';
import { docsRoutes, packageVersion } from './openapi/index.js';

/** Every API route, in one table: the router and the OpenAPI document are built from it. */
export function apiRoutes(): ApiRouteSpec[] {
  const table: ApiRouteSpec[] = [...identityRoutes()];
  table.push(...docsRoutes(() => table, packageVersion()));
  return table;
}

export const startApi: RoleStarter = async (services: Services, server: HttpServer) => {
  const limiter = new RateLimiter(services.kv, services.config.auth.rate_limit_per_minute);
  registerRoutes(server, services, limiter, apiRoutes());
};
