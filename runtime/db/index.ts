export * from './pool.js';
export * from './transaction.js';
export * from './migrations.js';
export * from './embedded-postgres.js';
export * from './database-errors.js';
export * from './committed-changes.js';
