// The server toolsets an agent can enable by name (`config.toolsets.<name>.enabled`). More
// toolsets (web, environment, …) plug in here as one entry each. Frozen: the table is
// read-only, so it is no mutable singleton.
import type { ToolsetFactory } from './tool-types.js';
import { utilitiesToolset } from './utilities-toolset.js';

export const BUILTIN_TOOLSETS: Readonly<Record<string, ToolsetFactory>> = Object.freeze({
  utilities: utilitiesToolset,
});

export function toolsetFactory(name: string): ToolsetFactory | undefined {
  return Object.hasOwn(BUILTIN_TOOLSETS, name) ? BUILTIN_TOOLSETS[name] : undefined;
}
