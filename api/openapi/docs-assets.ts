import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { docsInitScript } from './docs-page.js';

export interface DocsAsset {
  body: Buffer;
  contentType: string;
}

// The only files served from swagger-ui-dist: an allow-list, so that a request can never
// name a path outside it (no traversal, no source maps, not the package's own HTML).
const PACKAGE_FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};
const INIT_FILE = 'init.js';

export const DOCS_ASSET_NAMES: readonly string[] = [...Object.keys(PACKAGE_FILES), INIT_FILE];

export function swaggerUiDirectory(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

export function swaggerUiVersion(): string {
  return (createRequire(import.meta.url)('swagger-ui-dist/package.json') as { version: string }).version;
}

/**
 * Loads each allowed file at most once per loader (on its first request: building the route
 * table reads nothing) and keeps it in memory; the bundle is ~1.7 MB and never changes while
 * the process runs. Returns null for a name outside the allow-list.
 */
export function docsAssetLoader(): (name: string) => Promise<DocsAsset | null> {
  const loaded = new Map<string, Promise<DocsAsset>>();
  const directory = swaggerUiDirectory();
  return (name) => {
    if (!Object.hasOwn(PACKAGE_FILES, name) && name !== INIT_FILE) return Promise.resolve(null);
    let asset = loaded.get(name);
    if (!asset) {
      asset =
        name === INIT_FILE
          ? Promise.resolve({ body: Buffer.from(docsInitScript()), contentType: 'text/javascript; charset=utf-8' })
          : readFile(join(directory, name)).then((body) => ({ body, contentType: PACKAGE_FILES[name]! }));
      // A failed read is not cached: the next request tries again.
      asset.catch(() => loaded.delete(name));
      loaded.set(name, asset);
    }
    return asset;
  };
}
