export * from './common.js';
export * from './identity.js';
export * from './runs.js';
