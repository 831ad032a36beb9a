// The seal hook of finding analyses. A folder of its own because the engine registers it at
// creation: it imports only runtime/, so the engine does not depend on thread operations.
export { recordAnalysisFindings } from './record-analysis-findings.js';
