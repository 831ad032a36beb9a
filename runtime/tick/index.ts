export * from './tick-flush.js';
