export const DOCS_PATH = '/api/v1/docs';
export const DOCUMENT_PATH = '/api/v1/openapi.json';
export const ASSETS_PATH = `${DOCS_PATH}/assets`;

/**
 * Everything the page loads comes from this process, so a strict policy holds: no inline
 * script or style element, no other origin. Swagger UI's stylesheet draws its icons with
 * data: SVG images, hence img-src data:.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page: Swagger UI from the swagger-ui-dist package, served under ASSETS_PATH. Asset URLs
 * carry a version query so that browsers may cache them for long and still pick up an upgrade.
 */
export function docsHtml(cacheKey: string): string {
  const asset = (file: string) => escapeHtml(`${ASSETS_PATH}/${file}?v=${encodeURIComponent(cacheKey)}`);
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>svc-service API</title>
    <link rel="stylesheet" href="${asset('swagger-ui.css')}">
    <link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}" sizes="32x32">
    <link rel="icon" type="image/png" href="${asset('favicon-16x16.png')}" sizes="16x16">
  </head>
  <body>
    <noscript>The interactive API reference needs JavaScript; the document itself is at <a href="${DOCUMENT_PATH}">${DOCUMENT_PATH}</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="${asset('swagger-ui-bundle.js')}"></script>
    <script src="${asset('init.js')}"></script>
  </body>
</html>
`;
}

/** Served as a file (not inline) so that the page's CSP needs no 'unsafe-inline'. */
export function docsInitScript(): string {
  return `'use strict';
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(DOCUMENT_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  // persistAuthorization stays off: a bearer token is not kept in localStorage.
  tryItOutEnabled: false,
  displayOperationId: true,
  // Never ask a third-party validator service about the document (the page works offline).
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;
}
