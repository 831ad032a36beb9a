export * from './http-types.js';
export * from './http-server.js';
export * from './error-body.js';
export * from './request-id.js';
export * from './uws.js';
export * from './request-body.js';
export * from './json-text.js';
