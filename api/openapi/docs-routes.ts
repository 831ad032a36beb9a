import { Type } from '@sinclair/typebox';
import { AppError } from '../../runtime/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody } from '../schemas/index.js';
import { docsAssetLoader, swaggerUiVersion } from './docs-assets.js';
import { ASSETS_PATH, DOCS_CSP, DOCS_PATH, DOCUMENT_PATH, docsHtml } from './docs-page.js';
import { buildOpenApiDocument } from './openapi-document.js';

// Asset URLs carry a version query (see docsHtml), so a year is safe to cache.
const ASSET_CACHE = 'public, max-age=31536000, immutable';
const OpenApiDocument = Type.Object(
  { openapi: Type.Literal('3.1.0'), info: Type.Object({ title: Type.String(), version: Type.String() }), paths: Type.Record(Type.String(), Type.Unknown()), components: Type.Record(Type.String(), Type.Unknown()) },
  { description: 'an OpenAPI 3.1 document' },
);

/**
 * The API's own description: the OpenAPI document and an interactive page (Swagger UI) that
 * works without internet access, served by every process that serves the API. `getRoutes`
 * is read on the first request, so the document includes routes appended after this call
 * (these three too).
 */
export function docsRoutes(getRoutes: () => ApiRouteSpec[], version: string): ApiRouteSpec[] {
  // Per route table, not per module: built and serialized once, on the first request.
  let document: string | null = null;
  const asset = docsAssetLoader();
  const open = { tag: 'docs', auth: 'none', workspace: 'none', permission: 'none' } as const;
  return [
    defineRoute({
      ...open,
      method: 'GET',
      path: DOCUMENT_PATH,
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      description: 'Generated from the route table and the schemas that validate requests.',
      responses: { 200: { description: 'the document', schema: OpenApiDocument } },
      handler: async () => {
        document ??= JSON.stringify(buildOpenApiDocument(getRoutes(), { version }));
        return { status: 200, body: document, contentType: 'application/json', headers: { 'cache-control': 'no-cache' } };
      },
    }),
    defineRoute({
      ...open,
      method: 'GET',
      path: DOCS_PATH,
      operationId: 'getDocsPage',
      summary: 'Interactive API reference (HTML page, Swagger UI served by this process)',
      responses: { 200: { description: 'a text/html page; its scripts and styles come from this process only' } },
      handler: async () => ({
        status: 200,
        body: docsHtml(`${version}-${swaggerUiVersion()}`),
        contentType: 'text/html; charset=utf-8',
        headers: { 'content-security-policy': DOCS_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache' },
      }),
    }),
    defineRoute({
      ...open,
      method: 'GET',
      path: `${ASSETS_PATH}/{file}`,
      operationId: 'getDocsAsset',
      summary: 'A script, style sheet or icon of the docs page',
      params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'a file name from a fixed allow-list' }) }),
      // The page adds ?v=<versions> so that a cached file is never served across an upgrade.
      query: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64, description: 'cache-busting version tag (ignored)' })) }),
      responses: {
        200: { description: 'the file (text/javascript, text/css or image/png), cacheable for a year' },
        404: { description: 'not one of the served files', schema: ErrorBody },
      },
      handler: async ({ params }) => {
        const file = await asset(params.file);
        if (!file) throw new AppError('not_found', 'no such docs asset');
        return { status: 200, body: file.body, contentType: file.contentType, headers: { 'cache-control': ASSET_CACHE, 'x-content-type-options': 'nosniff' } };
      },
    }),
  ];
}
