// Finding analyses: trace selection, the analysis input, and the seal hook that turns the
// analysis run's output into findings.
export { startFindingAnalysis, DEFAULT_MAX_TRACES, type AnalysisRequest, type AnalysisTarget } from './start-analysis.js';
export { buildAnalysisInput, type AnalysisInput } from './analysis-input.js';
export { recordAnalysisFindings } from './seal/index.js';
