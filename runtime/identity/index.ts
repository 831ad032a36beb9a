export * from './password.js';
export * from './email.js';
