import { publishChangesOnce } from '../cache/index.js';
import type { LoadedConfig } from '../config/index.js';
import { normalizeEmail } from '../identity/index.js';
import type { Logger } from '../log/index.js';
import { findUserByEmail, setUserDisabled } from '../stores/index.js';
import { withDatabase } from './database-session.js';
import { CliExit, EXIT } from './exit-codes.js';

/** user disable / user enable: flips disabled_at; grants, keys and sessions are kept. */
export async function setUserEnabledCommand(loaded: LoadedConfig, logger: Logger, options: { email: string; enabled: boolean }): Promise<void> {
  const email = normalizeEmail(options.email);
  if (!email) throw new CliExit(EXIT.failure, `not a valid email address: ${JSON.stringify(options.email)}`);
  await withDatabase(loaded, logger, { checkSchema: true }, async (pool) => {
    const user = await findUserByEmail(pool, email);
    if (!user) throw new CliExit(EXIT.failure, `no user with email ${email}`);
    const changed = await setUserDisabled(pool, user.id, !options.enabled);
    const state = options.enabled ? 'enabled' : 'disabled';
    process.stdout.write(`${JSON.stringify({ user_id: user.id, email: user.email, status: state, changed })}\n`);
    if (!changed) process.stderr.write(`user ${email} was already ${state}\n`);
    // Running processes cache credentials (runtime/cache): they drop this user's when told. The
    // in-process bus (no kv.url) caches none, so there is no one to tell.
    const { kv } = loaded.config;
    if (kv.url !== '' && !(await publishChangesOnce({ url: kv.url, prefix: kv.key_prefix }, [{ kind: 'user', id: user.id }]))) {
      process.stderr.write(`warning: Redis (kv.url) did not take the change notice: running processes apply it within cache.ttl_seconds (${loaded.config.cache.ttl_seconds} s)\n`);
    }
  });
}
