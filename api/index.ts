import type { RoleStarter } from '../runtime/index.js';
import { startApi } from './start-api.js';

export { apiRoutes } from './start-api.js';

/** Starters of the HTTP API (control and all roles). */
export const apiStarters: RoleStarter[] = [startApi];
