export { readSkillFileTool, skillFolders, skillsPrompt, READ_SKILL_FILE_TOOL, SKILLS_TOOLSET } from './skill-tools.js';
