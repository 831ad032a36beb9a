// Everything an attempt derives from its start message before the loop runs: the typed
// configuration, the tool catalog and the structured-output checker. A start that cannot run
// (bad configuration, unknown model API, invalid output schema) fails here with a code, before
// any item is emitted.
import { Value } from '@sinclair/typebox/value';
import { isModelApi } from '../../runtime/providers/model-adapters/index.js';
import { readAgentConfig, type AgentConfig } from './agent-config.js';
import { AttemptStart, type Failure } from './attempt-protocol.js';
import { sharedSchemaCompiler } from './json-schema.js';
import { compileOutputSpec, type OutputChecker } from './output-spec.js';
import { reviewerSetup, type ReviewerSetup } from './reviewer.js';
import type { HostPort } from './attempt-port.js';
import { addConnectionTools, buildToolCatalog, ENVIRONMENT_TOOLSET, memoryResource, recallPrompt, skillsPrompt, ToolsetUnavailable, type ToolCatalog } from './tools/index.js';

export interface AttemptSetup {
  config: AgentConfig;
  catalog: ToolCatalog;
  output: OutputChecker | null;
  /** Null without config.reviewer. An unusable reviewer model is not fatal: reviews follow on_error. */
  reviewer: ReviewerSetup | null;
  /** System prompt sections the tools add after the agent's instructions (the pinned skills, recalled memory records). */
  promptSections: string[];
  /** Ends what the tools hold open (MCP sessions); called once when the attempt ends. */
  close(): Promise<void>;
}

export type SetupResult = { ok: true; setup: AttemptSetup } | { ok: false; failure: Failure };

/** `host` and `signal` serve tools that reach out while the catalog is built (MCP listings). */
export async function prepareAttempt(start: AttemptStart, host: HostPort, signal: AbortSignal): Promise<SetupResult> {
  if (!Value.Check(AttemptStart, start)) {
    const first = Value.Errors(AttemptStart, start).First();
    return fail('invalid_start', `invalid start message at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`);
  }
  if (!isModelApi(start.model.api)) return fail('model_unsupported_api', `no adapter for model API "${start.model.api}"`);
  const read = readAgentConfig(start.config);
  if (!read.ok) return fail('invalid_config', read.message);
  const compiler = sharedSchemaCompiler();
  let output: OutputChecker | null;
  try {
    output = compileOutputSpec(read.config.output_spec, compiler);
  } catch (err) {
    return fail('invalid_config', `invalid output_spec schema: ${err instanceof Error ? err.message : String(err)}`);
  }
  const reviewer = reviewerSetup(read.config, start);
  const resources = start.tool_resources ?? {};
  const toolsetSetup = { resources, options: start.run.options, allowedHttpOrigins: start.allowed_http_origins ?? [] };
  let catalog: ToolCatalog;
  let recalled: string;
  try {
    catalog = buildToolCatalog(read.config, compiler, toolsetSetup);
    // Mounts that cannot be served fail the attempt even with the memory tools switched off:
    // their recall belongs in the context too.
    recalled = recallPrompt(memoryResource({ resources }));
  } catch (err) {
    if (err instanceof ToolsetUnavailable) return fail(err.code, err.message);
    // A revision stored before this build refused such toolsets can name one it does not serve.
    return fail('invalid_config', err instanceof Error ? err.message : String(err));
  }
  let close = async (): Promise<void> => undefined;
  if (read.config.connection_tools?.length) {
    try {
      close = (await addConnectionTools(catalog, read.config.connection_tools, toolsetSetup, host, signal)).close;
    } catch (err) {
      if (err instanceof ToolsetUnavailable) return fail(err.code, err.message);
      throw err;
    }
  }
  const promptSections = [skillsPrompt(resources.skills ?? [], skillsRootOf(resources.families?.[ENVIRONMENT_TOOLSET])), recalled].filter((s) => s !== '');
  return { ok: true, setup: { config: read.config, catalog, output, reviewer, promptSections, close } };
}

/** Where the environment keeps the skill packages, from the environment family's resources. */
function skillsRootOf(environment: unknown): string | undefined {
  const root = (environment as { skills_root?: unknown } | undefined)?.skills_root;
  return typeof root === 'string' ? root : undefined;
}

function fail(code: string, message: string): SetupResult {
  return { ok: false, failure: { code, message } };
}
