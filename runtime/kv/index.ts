export * from './kv.js';
