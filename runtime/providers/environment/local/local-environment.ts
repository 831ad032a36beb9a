import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EnvironmentPathError, EnvironmentVendorError, type EnvironmentClientFactory, type EnvironmentHostSettings, type EnvironmentInstance } from '../environment-client.js';
import { hostPath, isUnder, listLocalFiles, readLocalFile, writeLocalFile } from './local-files.js';
import { checkBubblewrap, runSandboxed, SANDBOX_SKILLS, SANDBOX_WORKDIR } from './local-sandbox.js';

// The `local` environment type (development only, environments.enable_local): one directory
// per environment under environments.local_directory, named by the environment id, and every
// command run in a bubblewrap sandbox over it (local-sandbox.ts). Nothing runs between
// commands, so stopping and starting only mark the record; destroying removes the directory.
// Skill packages placed in the environment live in a sibling folder (<id>.skills), mounted
// read-only at /skills for commands and reachable at /skills for the file tools.

const ENVIRONMENT_ID = /^env_[0-9a-z]{26}$/;

function directoryOf(settings: EnvironmentHostSettings, instance: EnvironmentInstance): string {
  // The id names a folder on the host: anything but our own id format is refused outright.
  if (!ENVIRONMENT_ID.test(instance.id)) throw new EnvironmentVendorError('refused', `not an environment id: ${instance.id}`);
  return join(settings.localDirectory, instance.id);
}

/** The host folder of the environment's skill packages (/skills in the sandbox): a sibling of its directory. */
const skillsDirectoryOf = (settings: EnvironmentHostSettings, instance: EnvironmentInstance): string => `${directoryOf(settings, instance)}.skills`;

function envVars(config: Record<string, unknown>): Record<string, string> {
  const env = config['env'];
  return typeof env === 'object' && env !== null ? (env as Record<string, string>) : {};
}

/** Memoized per process: whether bubblewrap can build a sandbox on this host. */
function bubblewrapProblem(settings: EnvironmentHostSettings): Promise<string | null> {
  const key = `bwrap:${settings.bwrapPath}`;
  let check = settings.checks.get(key);
  if (!check) {
    check = (async () => {
      const scratch = join(settings.localDirectory, '.probe');
      await mkdir(scratch, { recursive: true, mode: 0o700 });
      return checkBubblewrap(settings, scratch);
    })();
    settings.checks.set(key, check);
  }
  return check;
}

export const localEnvironmentClient: EnvironmentClientFactory = (_provider, settings) => {
  const requireSandbox = async (): Promise<void> => {
    const problem = await bubblewrapProblem(settings);
    if (problem) throw new EnvironmentVendorError('refused', problem);
  };
  const existing = async (instance: EnvironmentInstance): Promise<string> => {
    const directory = directoryOf(settings, instance);
    const found = await stat(directory).catch(() => null);
    if (!found?.isDirectory()) throw new EnvironmentVendorError('not_found', `the directory of environment ${instance.id} is gone`);
    return directory;
  };
  const skillsDirectory = async (instance: EnvironmentInstance): Promise<string> => {
    const directory = skillsDirectoryOf(settings, instance);
    await mkdir(directory, { recursive: true, mode: 0o755 });
    return directory;
  };
  return {
    unavailableReason: () => bubblewrapProblem(settings),
    defaultWorkingDirectory: () => SANDBOX_WORKDIR,
    async create(instance) {
      await requireSandbox();
      const directory = directoryOf(settings, instance);
      await mkdir(settings.localDirectory, { recursive: true, mode: 0o700 });
      await mkdir(directory, { recursive: true, mode: 0o755 });
      // The template's workdir is /workspace or below it (its schema says so): made here.
      if (instance.working_directory !== SANDBOX_WORKDIR) await mkdir(hostPath(directory, instance.working_directory), { recursive: true });
      return { vendor_id: instance.id, vendor_state: {}, working_directory: instance.working_directory };
    },
    async start(instance) {
      await existing(instance);
      return {};
    },
    async stop() {
      // Nothing runs between commands: a stopped local environment is only a marked record.
    },
    async destroy(instance) {
      // rm does not follow links inside the tree; a missing directory is already destroyed.
      await rm(directoryOf(settings, instance), { recursive: true, force: true });
      await rm(skillsDirectoryOf(settings, instance), { recursive: true, force: true });
    },
    async exec(instance, request, signal) {
      await requireSandbox();
      const directory = await existing(instance);
      return runSandboxed(settings, { directory, skillsDirectory: skillsDirectoryOf(settings, instance), cwd: request.cwd, command: request.command, env: envVars(instance.config), timeoutMs: request.timeout_ms, outputLimit: request.output_limit }, signal);
    },
    async readFile(instance, path, maxBytes) {
      const directory = await existing(instance);
      if (isUnder(path, SANDBOX_SKILLS)) return readLocalFile(await skillsDirectory(instance), path, maxBytes, SANDBOX_SKILLS);
      return readLocalFile(directory, path, maxBytes);
    },
    async writeFile(instance, path, content) {
      const directory = await existing(instance);
      if (isUnder(path, SANDBOX_SKILLS)) return writeLocalFile(await skillsDirectory(instance), path, content, SANDBOX_SKILLS);
      await writeLocalFile(directory, path, content);
    },
    async listFiles(instance, path, recursive, maxEntries) {
      const directory = await existing(instance);
      if (isUnder(path, SANDBOX_SKILLS)) return listLocalFiles(await skillsDirectory(instance), path, recursive, maxEntries, SANDBOX_SKILLS);
      return listLocalFiles(directory, path, recursive, maxEntries);
    },
    async removeTree(instance, path) {
      // A skill package's folder (the host writes /skills, commands only read it); rm does not
      // follow links inside the tree. The skills root itself is never removed this way.
      const root = await skillsDirectory(instance);
      const target = hostPath(root, path, SANDBOX_SKILLS);
      if (target === root) throw new EnvironmentPathError(`${path} is the skills folder itself`);
      await rm(target, { recursive: true, force: true });
    },
  };
};
