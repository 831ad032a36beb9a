export { ASK_USER_TOOL, buildToolCatalog, ToolCatalog, type CatalogEntry, type ToolKind } from './tool-catalog.js';
export { BUILTIN_TOOLSETS, toolsetFactory } from './toolset-registry.js';
export { ToolError, ToolsetUnavailable, type ServerTool, type ToolContext, type ToolRun, type ToolsetFactory, type ToolsetSetup } from './tool-types.js';
export { skillFolders, skillsPrompt, READ_SKILL_FILE_TOOL } from './skills/index.js';
export { addConnectionTools, AUTHORIZE_OPERATION, ConnectionsResource, CONNECTIONS_TOOLSET, LOAD_CONNECTION_TOOLS, type ConnectionTools } from './connections/index.js';
export { EnvironmentResources, ENVIRONMENT_TOOLSET } from './environment/index.js';
export { MemoryResource, MEMORY_TOOLSET, MountResource, RecalledSource, recallPrompt, memoryResource } from './memory/index.js';
export { WEB_TOOLSET, WebResource, type WebProviderTarget } from './web/index.js';
