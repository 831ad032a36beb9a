export * from './stream-event.js';
export * from './stream-bus.js';
export * from './stream-ids.js';
export * from './create-stream-bus.js';
export * from './command-batcher.js';
