export { consoleRoutes, CONSOLE_CSP } from './console-routes.js';
