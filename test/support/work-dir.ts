import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string | null = null;

/**
 * One scratch working directory per test process: service and CLI processes a test spawns run
 * there, so their relative defaults (data/objects, data/keyring.json) are shared by the
 * processes of one test file (a worker must read the checkpoints and decrypt the credentials
 * the control process wrote) and never land in the repository.
 */
export function testWorkDir(): string {
  if (dir === null) {
    const created = mkdtempSync(join(tmpdir(), 'svc-procs-'));
    dir = created;
    process.on('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return dir;
}
