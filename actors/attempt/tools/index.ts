export { ASK_USER_TOOL, buildToolCatalog, ToolCatalog, type CatalogEntry, type ToolKind } from './tool-catalog.js';
export { BUILTIN_TOOLSETS, toolsetFactory } from './toolset-registry.js';
export { ToolError, type ServerTool, type ToolContext, type ToolsetFactory } from './tool-types.js';
