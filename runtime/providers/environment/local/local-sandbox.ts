import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import type { EnvironmentHostSettings, ExecResult } from '../environment-client.js';
import { OutputCapture } from '../output-capture.js';

// Commands of the `local` type run under bubblewrap (bwrap):
// - every namespace unshared (user, pid, network, ipc, uts, cgroup): the network namespace is
//   private (only its own loopback), so nothing on the host or beyond is reachable;
// - the system folders read-only, /tmp a fresh tmpfs, and only the environment's own directory
//   writable, mounted at /workspace;
// - an unprivileged user (uid 1000) with every capability dropped, a new session (no terminal
//   injection), and an empty environment apart from what the template sets: the service's own
//   variables (database URL, keys) never reach a command;
// - --die-with-parent: when bwrap's parent (this process) dies, or bwrap is killed, every
//   process of the sandbox is killed with it (the pid namespace's init goes, and the kernel ends
//   the whole namespace). A timeout therefore kills the whole process tree with one SIGKILL.

export const SANDBOX_WORKDIR = '/workspace';
/** Where the environment's skill packages are mounted, read-only (TOOLS.md "Skills in runs"). */
export const SANDBOX_SKILLS = '/skills';
const SANDBOX_UID = '1000';
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/etc'];
const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function sandboxArgs(settings: EnvironmentHostSettings, directory: string, cwd: string, skillsDirectory: string | undefined): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--hostname', 'sandbox', '--uid', SANDBOX_UID, '--gid', SANDBOX_UID, '--cap-drop', 'ALL'];
  for (const folder of SYSTEM_FOLDERS) args.push('--ro-bind-try', folder, folder);
  // Service files that sit inside a read-only system folder (a key ring under /etc, say) are
  // covered by an empty mount, so a command cannot read them.
  for (const hidden of settings.hiddenPaths) {
    if (!SYSTEM_FOLDERS.some((f) => hidden === f || hidden.startsWith(`${f}/`)) || !existsSync(hidden)) continue;
    if (statSync(hidden).isDirectory()) args.push('--tmpfs', hidden);
    else args.push('--ro-bind', '/dev/null', hidden);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', directory, SANDBOX_WORKDIR);
  // The skill packages placed in the environment, read-only (absent until one is placed).
  if (skillsDirectory !== undefined && existsSync(skillsDirectory)) args.push('--ro-bind', skillsDirectory, SANDBOX_SKILLS);
  args.push('--chdir', cwd);
  return args;
}

function sandboxEnv(vars: Record<string, string>): Record<string, string> {
  return { PATH: SANDBOX_PATH, HOME: SANDBOX_WORKDIR, LANG: 'C.UTF-8', TERM: 'dumb', ...vars };
}

export interface SandboxCommand {
  directory: string;
  /** Host folder of the environment's skill packages, mounted read-only at /skills. */
  skillsDirectory?: string;
  cwd: string;
  command: string;
  env: Record<string, string>;
  timeoutMs: number;
  outputLimit: number;
}

/** Runs one command in the sandbox; a timeout or an abort kills its whole process tree. */
export function runSandboxed(settings: EnvironmentHostSettings, spec: SandboxCommand, signal: AbortSignal): Promise<ExecResult> {
  const stdout = new OutputCapture(spec.outputLimit);
  const stderr = new OutputCapture(spec.outputLimit);
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn(settings.bwrapPath, [...sandboxArgs(settings, spec.directory, spec.cwd, spec.skillsDirectory), '/bin/sh', '-c', spec.command], {
      env: sandboxEnv(spec.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    const kill = (): void => {
      // SIGKILL to bwrap: --die-with-parent takes the sandbox's init, and with it every
      // process of the pid namespace, down too.
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, spec.timeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', kill);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', kill);
      resolve({ exit_code: timedOut || signal.aborted ? null : code, stdout: stdout.result(), stderr: stderr.result(), timed_out: timedOut });
    });
  });
}

/**
 * Why bubblewrap cannot run sandboxes on this host, or null when it can: the executable must
 * exist and actually create the namespaces (a kernel without unprivileged user namespaces, or
 * a container without the rights, fails here rather than at the first command).
 */
export async function checkBubblewrap(settings: EnvironmentHostSettings, scratch: string): Promise<string | null> {
  const signal = AbortSignal.timeout(15_000);
  try {
    const result = await runSandboxed(settings, { directory: scratch, cwd: SANDBOX_WORKDIR, command: 'exit 0', env: {}, timeoutMs: 10_000, outputLimit: 4096 }, signal);
    if (result.exit_code === 0) return null;
    const why = result.stderr.text.trim().split('\n').slice(-1)[0] ?? '';
    return `bubblewrap (${settings.bwrapPath}) cannot create a sandbox on this host${why ? `: ${why}` : ''}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `bubblewrap is not installed on this host (${settings.bwrapPath} not found); install the Debian package bubblewrap (apt-get install bubblewrap) or set environments.local_bwrap`;
    return `bubblewrap (${settings.bwrapPath}) cannot be started: ${(error as Error).message}`;
  }
}
