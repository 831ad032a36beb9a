// The run's environment before its attempt starts (TOOLS.md "Environments"): with
// default_environment_template_id and without lazy_environment it is created (or its thread's
// is reused, or started again) now, on the worker host, and recorded in environment_mounts;
// with lazy_environment the first environment tool call does that. Either way the attempt
// learns the template, the mount name and the working directory.
import { AppError, getEnvironmentTemplate, providerClient, skillPackagesRoot, type EnvironmentRuntime, type RunRow, type Services } from '../../../runtime/index.js';
import type { EnvironmentResources } from '../../attempt/index.js';
import { DEFAULT_MOUNT_NAME, mountRunEnvironment } from '../host-requests/index.js';

/** An environment problem that stops the attempt, with a run failure code of its own. */
function environmentFailure(error: unknown): unknown {
  if (!(error instanceof AppError) || error.code === 'internal') return error;
  const code = error.code === 'disabled' ? 'environment_disabled' : 'environment_unavailable';
  return new AppError(error.code, `the run's environment: ${error.message}`, { details: { ...error.details, failure_code: code }, cause: error });
}

export async function prepareEnvironment(services: Services, run: RunRow, environments: EnvironmentRuntime, signal: AbortSignal): Promise<EnvironmentResources | null> {
  const templateId = run.config.default_environment_template_id;
  if (typeof templateId !== 'string') return null;
  const lazy = run.config.lazy_environment === true;
  // With pinned skills, the attempt's prompt says where the packages are (placed on mount).
  const hasSkills = ((run.config.skills as unknown[] | undefined) ?? []).length > 0;
  const skills = (type: string) => (hasSkills ? { skills_root: skillPackagesRoot(type) } : {});
  try {
    const mounted = (run.environment_mounts as Array<{ working_directory?: string }>)[0]?.working_directory;
    if (!lazy) {
      const env = await mountRunEnvironment({ services, run, attemptId: run.current_attempt_id!, environments, signal });
      return { template_id: templateId, name: DEFAULT_MOUNT_NAME, working_directory: env.working_directory, lazy, ...skills(env.type) };
    }
    if (mounted !== undefined && !hasSkills) return { template_id: templateId, name: DEFAULT_MOUNT_NAME, working_directory: mounted, lazy };
    const template = await getEnvironmentTemplate(services.pool, run.workspace_id, templateId);
    if (!template) throw new AppError('not_found', `environment template ${templateId} not found`);
    const workdir = template.config['workdir'];
    const { client, provider } = await providerClient(environments, run.workspace_id, template.provider_id, false);
    if (mounted !== undefined) return { template_id: templateId, name: DEFAULT_MOUNT_NAME, working_directory: mounted, lazy, ...skills(provider.type) };
    return { template_id: templateId, name: DEFAULT_MOUNT_NAME, working_directory: typeof workdir === 'string' ? workdir : client.defaultWorkingDirectory(template.config), lazy, ...skills(provider.type) };
  } catch (error) {
    throw environmentFailure(error);
  }
}
