export * from './lru-cache.js';
export * from './read-caches.js';
export * from './cache-bus.js';
export * from './cached-reads.js';
export * from './history-prefixes.js';
