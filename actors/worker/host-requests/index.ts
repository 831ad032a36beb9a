// Every operation an attempt may ask of its host, by name (TOOLS.md "One shape"). Tool
// families add theirs here; the attempt names them in HostPort.request(op, args).
import { readAssetOperation } from './asset-operations.js';
import { ENVIRONMENT_OPERATIONS } from './environment-operations.js';
import type { HostOperation } from './host-request.js';
import { resolveModelOperation } from './model-operations.js';
import { authorizeConnectionOperation } from './connection-operations.js';
import { memoryAddOperation, memorySearchOperation } from './memory-operations.js';
import { readSkillFileOperation } from './skill-operations.js';
import { storeToolOutputOperation } from './tool-output-operations.js';

export { DEFAULT_MOUNT_NAME, mountRunEnvironment } from './environment-operations.js';
export { hostRequestContext, serveHostRequest, type HostOperation, type HostRequestContext } from './host-request.js';

export const HOST_OPERATIONS: Readonly<Record<string, HostOperation>> = Object.freeze({
  'tool_output.store': storeToolOutputOperation,
  'skill.read_file': readSkillFileOperation,
  'model.resolve': resolveModelOperation,
  'connection.authorize': authorizeConnectionOperation,
  ...ENVIRONMENT_OPERATIONS,
  'memory.search': memorySearchOperation,
  'memory.add': memoryAddOperation,
  'assets.read': readAssetOperation,
});
export { parseFrontMatter, prepareSkills } from './skill-summaries.js';
