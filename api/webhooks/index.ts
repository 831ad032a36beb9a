import type { ApiRouteSpec } from '../framework/index.js';
import { deliveryRoutes } from './delivery-routes.js';
import { subscriptionRoutes } from './subscription-routes.js';

export function webhookRoutes(): ApiRouteSpec[] {
  return [...subscriptionRoutes(), ...deliveryRoutes()];
}
