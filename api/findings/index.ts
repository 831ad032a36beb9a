import type { ApiRouteSpec } from '../framework/index.js';
import { findingAgentRoutes } from './finding-agent-routes.js';
import { findingAnalysisRoutes } from './finding-analysis-routes.js';
import { findingRoutes } from './finding-routes.js';

/** Findings (spec 4 rows 7–9): findings, the finding agent and finding analyses. */
export function findingsRoutes(): ApiRouteSpec[] {
  return [...findingRoutes(), ...findingAgentRoutes(), ...findingAnalysisRoutes()];
}
