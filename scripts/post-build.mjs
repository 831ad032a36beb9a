// Marks the compiled bin entry executable (tsc does not keep modes).
import { chmodSync, existsSync } from 'node:fs';
if (existsSync('dist/main.js')) chmodSync('dist/main.js', 0o755);
