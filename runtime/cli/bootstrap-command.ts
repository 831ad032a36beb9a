import type { LoadedConfig } from '../config/index.js';
import { withTransaction } from '../db/index.js';
import { hashPassword, normalizeEmail, passwordProblem } from '../identity/index.js';
import { ID_PREFIX, newId } from '../ids/index.js';
import type { Logger } from '../log/index.js';
import { countOrganizations, insertMembership, insertOrganization, insertUser, insertWorkspace } from '../stores/index.js';
import { withDatabase } from './database-session.js';
import { CliExit, EXIT } from './exit-codes.js';
import { promptHidden, readFirstLine } from './read-secret.js';

// Serialises concurrent bootstraps: the second one waits, then sees the first's organization.
const BOOTSTRAP_LOCK_KEY = 7_311_004_213;

async function readPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) {
    const line = await readFirstLine();
    if (line === null) throw new CliExit(EXIT.failure, 'no password on standard input (--password-stdin reads its first line)');
    return line;
  }
  if (!process.stdin.isTTY) throw new CliExit(EXIT.failure, 'no terminal to prompt for the password: pass --password-stdin and write it to standard input');
  const first = await promptHidden('Password for the administrator: ');
  const second = await promptHidden('Repeat the password: ');
  if (first !== second) throw new CliExit(EXIT.failure, 'the passwords do not match');
  return first;
}

/**
 * Creates the first organization, workspace and administrator and prints their ids as JSON.
 * Exit 3 without changes when an organization exists; exit 1 on invalid input.
 */
export async function bootstrapCommand(loaded: LoadedConfig, logger: Logger, options: { email: string; passwordStdin?: boolean }): Promise<void> {
  const email = normalizeEmail(options.email);
  if (!email) throw new CliExit(EXIT.failure, `not a valid email address: ${JSON.stringify(options.email)}`);
  const password = await readPassword(options.passwordStdin === true);
  const problem = passwordProblem(password);
  if (problem) throw new CliExit(EXIT.failure, problem);
  const passwordHash = await hashPassword(password);
  const ids = await withDatabase(loaded, logger, { checkSchema: true }, (pool) =>
    withTransaction(pool, async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
      if ((await countOrganizations(tx)) > 0) throw new CliExit(EXIT.alreadyInitialized, 'already initialized: an organization exists; nothing changed');
      const organization = await insertOrganization(tx, { id: newId(ID_PREFIX.organization), name: 'Default organization' });
      const user = await insertUser(tx, {
        id: newId(ID_PREFIX.user),
        organization_id: organization.id,
        email,
        password_hash: passwordHash,
        organization_role: 'admin',
      });
      const workspace = await insertWorkspace(tx, { id: newId(ID_PREFIX.workspace), organization_id: organization.id, name: 'Default workspace', created_by_id: user.id });
      await insertMembership(tx, { workspace_id: workspace.id, user_id: user.id, role: 'admin' });
      return { organization_id: organization.id, workspace_id: workspace.id, user_id: user.id };
    }),
  );
  process.stdout.write(`${JSON.stringify(ids)}\n`);
}
