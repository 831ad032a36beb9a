// Environments (TOOLS.md "Environments"): templates checked against their type, the vendor
// lifecycle of instances fenced by operation tokens, a run's thread environment, the
// environment tools' operations and the two sweeps. The vendor clients are in
// runtime/providers/environment.
export { createEnvironmentRuntime, providerClient, vendorProblem, type EnvironmentRuntime, type ProviderClient } from './environment-runtime.js';
export { createEnvironment, deleteEnvironment, startEnvironment, stopEnvironment, failureCode, type CreateEnvironmentInput, type DeleteOptions } from './environment-lifecycle.js';
export { ensureThreadEnvironment, type ThreadEnvironmentTarget } from './thread-environment.js';
export { ENVIRONMENT_TOOL_LIMITS, listEnvironmentFiles, readEnvironmentFile, runShell, sandboxPath, writeEnvironmentFile, type ShellInput } from './environment-tools.js';
export { checkTemplate, TEMPLATE_DEFAULTS } from './template-check.js';
export { maintainEnvironments, renewEnvironments, DEFAULT_SANDBOX_SECONDS, SWEEP_BATCH, type MaintainReport, type RenewReport } from './environment-sweeps.js';
export { KeyedLock } from './keyed-lock.js';
export { placeSkillPackages, skillPackagesPlaced, type SkillPackagePlacement } from './skill-placement.js';
