import { ROLES, type LoadedConfig, type Role } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { SchemaMismatchError, startService, type RoleStarters } from '../process/index.js';
import { CliExit, EXIT } from './exit-codes.js';

/** run --role: serves until SIGTERM/SIGINT, then shuts down gracefully and resolves. */
export async function runCommand(loaded: LoadedConfig, logger: Logger, starters: RoleStarters, options: { role: string }): Promise<void> {
  if (!(ROLES as readonly string[]).includes(options.role)) throw new CliExit(EXIT.failure, `--role must be one of ${ROLES.join(', ')}`);
  const role = options.role as Role;
  let running;
  try {
    running = await startService(loaded, role, starters, logger);
  } catch (error) {
    if (error instanceof SchemaMismatchError) throw new CliExit(EXIT.schemaMismatch, error.message);
    throw error;
  }
  const service = running;
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'shutting down');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      service.stop().then(resolve, (error) => {
        logger.error({ err: error }, 'shutdown failed');
        resolve();
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
}
