export * from './error-codes.js';
export * from './app-error.js';
export * from './pg-codes.js';
