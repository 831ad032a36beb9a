export * from './readiness.js';
export * from './schema-guard.js';
export * from './services.js';
export * from './health-routes.js';
export * from './start-service.js';
export * from './vacuum-check.js';
