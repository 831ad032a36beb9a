import type { RoleStarter } from '../runtime/index.js';

/** Starters of the HTTP API (control and all roles). */
export const apiStarters: RoleStarter[] = [];
