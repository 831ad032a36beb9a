import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { testWorkDir } from './work-dir.js';

export const MAIN = fileURLToPath(new URL('../../main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc-service …` as a real process (the compiled bin), with SVC_* env and optional stdin. */
export function runCliProcess(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: options.cwd ?? testWorkDir(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOGGING__LEVEL: 'warn', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}
