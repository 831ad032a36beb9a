// Host operations of the environment toolset: the attempt asks, the worker host resolves the
// run's environment (its thread's, for the agent's default_environment_template_id), records
// it in the run's environment_mounts, and runs the command or file operation at the vendor.
// Every operation is fenced by the attempt's lease before it touches anything, so an attempt
// that lost its run creates nothing and runs nothing.
import {
  AppError,
  ensureThreadEnvironment,
  listEnvironmentFiles,
  readEnvironmentFile,
  runShell,
  setRunEnvironmentMounts,
  writeEnvironmentFile,
  type EnvironmentRow,
  type ThreadEnvironmentTarget,
} from '../../../runtime/index.js';
import { HostRequestFailure, optionalStringArg, stringArg, type HostOperation, type HostRequestContext } from './host-request.js';
import { placeRunSkills } from './skill-placement.js';

/** The name of the run's one environment in environment_mounts and the tools' descriptions. */
export const DEFAULT_MOUNT_NAME = 'default';

export function environmentTarget(ctx: Pick<HostRequestContext, 'run' | 'signal'>): ThreadEnvironmentTarget {
  const templateId = ctx.run.config.default_environment_template_id;
  if (typeof templateId !== 'string') throw new AppError('not_found', 'this run has no environment (no default_environment_template_id)');
  return { workspaceId: ctx.run.workspace_id, threadId: ctx.run.thread_id, templateId, signal: ctx.signal };
}

/**
 * The run's environment, recorded in its environment_mounts when it is new to the run (a lazy
 * first call, or one that replaced an environment deleted while idle), with the run's pinned
 * skill packages placed in it under /skills (once per environment and revision). Fenced: the
 * write carries `current_attempt_id`, and an attempt that lost the run writes nothing.
 */
export async function mountRunEnvironment(ctx: Pick<HostRequestContext, 'services' | 'run' | 'attemptId' | 'environments' | 'signal'>): Promise<EnvironmentRow> {
  const env = await ensureThreadEnvironment(ctx.environments, environmentTarget(ctx));
  const mounts = ctx.run.environment_mounts as Array<{ environment_id?: string }>;
  if (!mounts.some((m) => m.environment_id === env.id)) {
    const next = [{ environment_id: env.id, name: DEFAULT_MOUNT_NAME, working_directory: env.working_directory }];
    if (!(await setRunEnvironmentMounts(ctx.services.pool, ctx.run.id, ctx.attemptId, next))) throw new HostRequestFailure('lease_lost', 'this attempt no longer holds the run');
    ctx.run.environment_mounts = next;
  }
  await placeRunSkills(ctx, env);
  return env;
}

const execOperation: HostOperation = async (ctx, args) => {
  const command = stringArg(args, 'command', 100_000);
  const workingDirectory = optionalStringArg(args, 'working_directory', 1024);
  const timeout = args.timeout_seconds;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > 600)) throw new AppError('invalid_argument', 'timeout_seconds must be an integer from 1 to 600');
  await ctx.fence();
  await mountRunEnvironment(ctx);
  return runShell(ctx.environments, environmentTarget(ctx), { command, ...(workingDirectory !== undefined ? { working_directory: workingDirectory } : {}), ...(timeout !== undefined ? { timeout_seconds: timeout } : {}) });
};

const readFileOperation: HostOperation = async (ctx, args) => {
  const path = stringArg(args, 'path');
  await ctx.fence();
  await mountRunEnvironment(ctx);
  return readEnvironmentFile(ctx.environments, environmentTarget(ctx), path);
};

const writeFileOperation: HostOperation = async (ctx, args) => {
  const path = stringArg(args, 'path');
  if (typeof args.content !== 'string') throw new AppError('invalid_argument', 'content must be a string');
  const encoding = args.encoding ?? 'utf-8';
  if (encoding !== 'utf-8' && encoding !== 'base64') throw new AppError('invalid_argument', 'encoding must be utf-8 or base64');
  const content = encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
  await ctx.fence();
  await mountRunEnvironment(ctx);
  return writeEnvironmentFile(ctx.environments, environmentTarget(ctx), path, content);
};

const listFilesOperation: HostOperation = async (ctx, args) => {
  const path = optionalStringArg(args, 'path');
  if (args.recursive !== undefined && typeof args.recursive !== 'boolean') throw new AppError('invalid_argument', 'recursive must be a boolean');
  await ctx.fence();
  await mountRunEnvironment(ctx);
  return listEnvironmentFiles(ctx.environments, environmentTarget(ctx), path, args.recursive === true);
};

export const ENVIRONMENT_OPERATIONS: Readonly<Record<string, HostOperation>> = Object.freeze({
  'environment.exec': execOperation,
  'environment.read_file': readFileOperation,
  'environment.write_file': writeFileOperation,
  'environment.list_files': listFilesOperation,
});
