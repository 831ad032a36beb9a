export { buildOpenApiDocument, type OpenApiInfo } from './openapi-document.js';
export { docsRoutes } from './docs-routes.js';
export { packageVersion } from './package-version.js';
