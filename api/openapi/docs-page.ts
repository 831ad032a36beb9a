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

/**
 * Served as a file (not inline) so that the page's CSP needs no 'unsafe-inline'.
 *
 * Swagger UI 5.33 and later virtualize the operation list once it holds 150 entries (tags
 * plus the operations of open tags). The threshold is a constant and no option turns it
 * off (swagger-api/swagger-ui#11056). Past it, only the entries near the viewport are in
 * the DOM and the rest is empty padding that fills in as the page scrolls. The document
 * crossed the threshold in merge 31e9e8b (assets, connections: 14 tags + 144 operations).
 * From then on the page held the first tag and six operations, and no error was reported.
 * Find in page (Ctrl+F), printing and anything that reads the DOM without scrolling (the
 * docs-page test) saw only those. The plugin below restores Swagger UI's own unvirtualized
 * list, which is what Swagger UI renders below the threshold: each tag with its
 * operations, collapsible. test/api/docs-page.test.ts checks that every operation of the
 * document is in the DOM without scrolling.
 */
export function docsInitScript(): string {
  return `'use strict';
// Swagger UI's unvirtualized operation list (see docsInitScript in api/openapi/docs-page.ts).
function FullOperationList(system) {
  var h = system.React.createElement;
  function Operations(props) {
    var specSelectors = props.specSelectors;
    var getComponent = props.getComponent;
    var taggedOps = specSelectors.taggedOperations();
    if (taggedOps.size === 0) return h('h3', null, ' No operations defined in spec!');
    var methods = specSelectors.validOperationMethods();
    var OperationTag = getComponent('OperationTag');
    var OperationContainer = getComponent('OperationContainer', true);
    return h('div', null, taggedOps.map(function (tagObj, tag) {
      var operations = tagObj.get('operations')
        .filter(function (op) { return methods.indexOf(op.get('method')) !== -1; })
        .map(function (op) {
          var path = op.get('path');
          var method = op.get('method');
          return h(OperationContainer, { key: path + '-' + method, specPath: op.get('specPath'), op: op, path: path, method: method, tag: tag });
        })
        .toArray();
      return h(OperationTag, {
        key: 'operation-' + tag,
        tagObj: tagObj,
        tag: tag,
        oas3Selectors: props.oas3Selectors,
        layoutSelectors: props.layoutSelectors,
        layoutActions: props.layoutActions,
        getConfigs: props.getConfigs,
        getComponent: getComponent,
        specUrl: specSelectors.url(),
      }, h('div', { className: 'operation-tag-content' }, operations));
    }).valueSeq().toArray());
  }
  return { components: { operations: Operations } };
}
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
  plugins: [FullOperationList],
  layout: 'BaseLayout',
});
`;
}
