import { readFileSync } from 'node:fs';

/**
 * The build version for the document's info.version: package.json's, read the way the CLI's
 * buildVersion() does (api/ may enter runtime/ only through its index, which leaves out
 * the CLI). The compiled file runs from dist/api/openapi/, three folders below package.json.
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
