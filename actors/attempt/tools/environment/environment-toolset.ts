// The `environment` toolset (TOOLS.md "Toolsets"): shell, read_file, write_file, list_files in
// the run's environment. The environment is the service's own state (a record, a vendor
// instance owned by the workspace), so every call is a host request: the worker host resolves
// the thread's environment (creating it at the first call with lazy_environment), fences the
// call by this attempt's lease, talks to the vendor and caps the output. Nothing here talks to
// a vendor or holds a credential.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { HostRequestError } from '../../attempt-port.js';
import { ToolError, ToolsetUnavailable, type ServerTool, type ToolContext, type ToolsetFactory } from '../tool-types.js';

export const ENVIRONMENT_TOOLSET = 'environment';

/** What the host prepared (actors/worker/tool-resources/environment-resources.ts). */
export const EnvironmentResources = Type.Object({
  template_id: Type.String(),
  /** The mount's name in the run's environment_mounts. */
  name: Type.String(),
  working_directory: Type.String(),
  lazy: Type.Boolean(),
  /** Where the run's pinned skill packages are in the environment (with pinned skills only). */
  skills_root: Type.Optional(Type.String()),
});
export type EnvironmentResources = Static<typeof EnvironmentResources>;

// Codes the model can act on; anything else (lease_lost, cancelled, internal) ends the call as
// a failure of the tool without internals.
const MODEL_VISIBLE = new Set(['invalid_argument', 'not_found', 'disabled', 'conflict', 'unavailable']);

async function ask(ctx: ToolContext, op: string, args: Record<string, unknown>): Promise<unknown> {
  try {
    return await ctx.host.request(op, args, ctx.signal);
  } catch (err) {
    if (err instanceof HostRequestError && MODEL_VISIBLE.has(err.code)) throw new ToolError(err.message);
    throw err;
  }
}

const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });

function tools(resources: EnvironmentResources): ServerTool[] {
  const where = `Paths are absolute or relative to ${resources.working_directory}.`;
  return [
    {
      name: 'shell',
      description: `Runs a shell command (/bin/sh -c) in your environment, starting in ${resources.working_directory}; files persist between calls and across runs of this thread. Returns exit_code, stdout and stderr (each cut to 24 KiB around a truncation marker). A command still running at its timeout (default 60 s, at most 600 s) is killed with every process it started and reported with timed_out: true.`,
      parameters: object(
        {
          command: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The command line.' },
          working_directory: { type: 'string', minLength: 1, maxLength: 1024, description: `Directory to run in. ${where}` },
          timeout_seconds: { type: 'integer', minimum: 1, maximum: 600, description: 'Kill the command after this many seconds (default 60).' },
        },
        ['command'],
      ),
      execute: (args, ctx) => ask(ctx, 'environment.exec', args),
    },
    {
      name: 'read_file',
      description: `Returns a file of your environment: {path, size, encoding (utf-8 or base64), content, truncated}; files are cut at 256 KiB. ${where}`,
      parameters: object({ path: { type: 'string', minLength: 1, maxLength: 4096 } }, ['path']),
      execute: (args, ctx) => ask(ctx, 'environment.read_file', args),
    },
    {
      name: 'write_file',
      description: `Writes a file in your environment (replacing it), creating missing folders. ${where}`,
      parameters: object(
        {
          path: { type: 'string', minLength: 1, maxLength: 4096 },
          content: { type: 'string', maxLength: 6_000_000 },
          encoding: { type: 'string', enum: ['utf-8', 'base64'], description: 'How content is given (default utf-8).' },
        },
        ['path', 'content'],
      ),
      execute: (args, ctx) => ask(ctx, 'environment.write_file', args),
    },
    {
      name: 'list_files',
      description: `Lists a folder of your environment (default: ${resources.working_directory}): entries {path, type, size}, at most 1000. ${where}`,
      parameters: object({ path: { type: 'string', minLength: 1, maxLength: 4096 }, recursive: { type: 'boolean', description: 'Include sub-folders (default false).' } }, []),
      execute: (args, ctx) => ask(ctx, 'environment.list_files', args),
    },
  ];
}

export const environmentToolset: ToolsetFactory = (_config, setup) => {
  const resources = setup.resources.families?.[ENVIRONMENT_TOOLSET];
  if (!Value.Check(EnvironmentResources, resources)) {
    // Configurations are refused without default_environment_template_id; a stored one from
    // before that rule is the only way here.
    throw new ToolsetUnavailable('environment_unavailable', 'the environment toolset needs default_environment_template_id');
  }
  return tools(resources);
};
