export * from './stream-event.js';
export * from './stream-bus.js';
