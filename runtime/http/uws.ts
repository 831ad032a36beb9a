import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';

export type { Uws };

/**
 * Loads uWebSockets.js and refuses its pure-JS emulation: the registry build falls back to a
 * Node implementation when the native addon does not load, which would silently cost most of
 * the front end's throughput. A fallback is a startup error (DESIGN.md, Platform).
 */
export function loadUws(): typeof Uws {
  const require = createRequire(import.meta.url);
  const uws = require('uWebSockets.js') as typeof Uws;
  const fallbackPath = require.resolve('uWebSockets.js/dist/index.js');
  if (require.cache[fallbackPath]) {
    throw new Error('uWebSockets.js native addon failed to load (pure-JS fallback refused); use Node 20 on linux-x64 with glibc');
  }
  return uws;
}
