import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

// Secrets never reach the log: credential-bearing fields are redacted wherever they appear in
// a record, and request URLs / query strings are never logged at all (the HTTP layer logs the
// route pattern, not the URL).
const REDACT_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'api_key',
  '*.api_key',
  'credential',
  '*.credential',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  'url',
  '*.url',
];

export function createLogger(options: { level: string; name?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'svc-service', ...(options.name ? { process_role: options.name } : {}), pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
