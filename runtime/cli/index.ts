export * from './program.js';
export * from './exit-codes.js';
