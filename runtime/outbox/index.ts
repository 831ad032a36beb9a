// The outbox contract shared by jobs/ (the sender) and actors/ (handlers and sweep hooks
// the run engine supplies).
export * from './outbox-handler.js';
export * from './retry-backoff.js';
