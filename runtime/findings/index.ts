// Findings: the enumerations, the finding agent's configuration and its preparation.
export * from './finding-values.js';
export * from './finding-agent-config.js';
export * from './prepare-finding-agent.js';
