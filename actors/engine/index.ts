export * from './engine-context.js';
export * from './engine.js';
export * from './run-options.js';
export * from './thread-actors.js';
