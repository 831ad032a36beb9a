import type { ApiRouteSpec } from '../framework/index.js';
import { skillFileRoutes } from './skill-file-routes.js';
import { skillRevisionRoutes } from './skill-revision-routes.js';
import { skillHeadRoutes } from './skill-routes.js';

/** Skills: heads and revisions like agents, each revision a package of files. No DELETE: 405. */
export function skillRoutes(): ApiRouteSpec[] {
  return [...skillHeadRoutes(), ...skillRevisionRoutes(), ...skillFileRoutes()];
}
