export * from './organizations.js';
export * from './workspaces.js';
export * from './users.js';
export * from './memberships.js';
