// The pinned skills of a run as the attempt sees them: built in host-requests/skill-summaries.ts,
// which the placement of skill packages in environments (a host operation) shares.
export { parseFrontMatter, prepareSkills } from '../host-requests/index.js';
