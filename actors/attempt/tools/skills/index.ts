export { readSkillFileTool, skillFolders, skillsPrompt, ENVIRONMENT_SKILLS_ROOT, READ_SKILL_FILE_TOOL, SKILLS_TOOLSET } from './skill-tools.js';
