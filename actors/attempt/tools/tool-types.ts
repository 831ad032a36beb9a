// Shapes shared by the toolsets and the tool catalog. Kept apart from both so a toolset can
// name them without importing the registry that imports it.
import type { Permission } from '../agent-config.js';

export interface ToolContext {
  /** Aborted on cancel: a long tool must stop with it. */
  signal: AbortSignal;
  now: () => Date;
}

/** A server tool: runs inside the attempt and returns a JSON value (or throws ToolError). */
export interface ServerTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object; arguments are validated against it before execute. */
  parameters: Record<string, unknown>;
  /** The toolset's default for this tool; the configuration can override it. */
  permission?: Permission;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** Builds a toolset's tools from its `toolsets.<name>.config`. */
export type ToolsetFactory = (config: Record<string, unknown>) => ServerTool[];

/** A failure the model should see (fed back as the tool result's error). */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}
