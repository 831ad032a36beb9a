import type { RoleStarter } from '../runtime/index.js';

/** Starters of the worker host (worker and all roles). */
export const workerStarters: RoleStarter[] = [];
