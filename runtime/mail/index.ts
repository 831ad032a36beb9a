// Identity mail: templates, transports (SMTP or log) and the email outbox payload.
export * from './mail-message.js';
export * from './mail-transport.js';
export * from './mail-outbox.js';
