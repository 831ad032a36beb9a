import { accessSync, constants, existsSync } from 'node:fs';
import type { LoadedConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { withDatabase } from './database-session.js';
import { CliExit, EXIT } from './exit-codes.js';

/**
 * migrate-run-objects (spec 1.2): converts runs stored in the original unpaged display format.
 * This build has only ever written the paged format, so the legacy inventory is empty: the
 * command validates its options, checks the schema and reports that nothing needs converting.
 * The conversion itself lands with the run displays (see the README's operator section).
 */
export async function migrateRunObjectsCommand(
  loaded: LoadedConfig,
  logger: Logger,
  options: { apply?: boolean; backupDir?: string; limit?: string },
): Promise<void> {
  const limit = options.limit === undefined ? 100 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliExit(EXIT.failure, '--limit takes a whole number from 1 to 1000');
  if (options.apply && !options.backupDir) throw new CliExit(EXIT.failure, '--apply needs --backup-dir PATH for the private backups');
  if (!options.apply && options.backupDir) throw new CliExit(EXIT.failure, '--backup-dir goes with --apply');
  if (options.backupDir) {
    if (!existsSync(options.backupDir)) throw new CliExit(EXIT.failure, `backup directory ${options.backupDir} does not exist`);
    try {
      accessSync(options.backupDir, constants.W_OK);
    } catch {
      throw new CliExit(EXIT.failure, `backup directory ${options.backupDir} is not writable`);
    }
  }
  await withDatabase(loaded, logger, { checkSchema: true }, async () => {
    const inspected = 0;
    process.stderr.write(`inspected ${inspected} runs (at most ${options.apply ? limit : 100})\n`);
    process.stdout.write(`${JSON.stringify({ mode: options.apply ? 'apply' : 'inspect', inspected, convertible: 0, converted: 0, refused: [] })}\n`);
    process.stderr.write('nothing to convert: no run uses the unpaged display format\n');
  });
}
