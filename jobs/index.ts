import type { RoleStarter } from '../runtime/index.js';

/** Starters of the background sweeps and the outbox sender (control and all roles). */
export const jobStarters: RoleStarter[] = [];
