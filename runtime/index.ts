// The public surface of runtime/: what actors/, jobs/ and api/ may import.
export * from './config/index.js';
export * from './errors/index.js';
export * from './ids/index.js';
export * from './log/index.js';
export * from './db/index.js';
export * from './kv/index.js';
export * from './http/index.js';
export * from './metrics/index.js';
export * from './process/index.js';
export * from './identity/index.js';
export * from './stores/index.js';
export * from './objects/index.js';
export * from './keyring/index.js';
