#!/usr/bin/env node
// The composition root: wires the CLI of runtime/ to the role starters of api/, jobs/ and
// actors/. Nothing imports this file.
import { runCli } from './runtime/cli/index.js';
import { apiStarters } from './api/index.js';
import { jobStarters } from './jobs/index.js';
import { workerStarters } from './actors/index.js';

const code = await runCli(process.argv, {
  control: [...apiStarters, ...jobStarters],
  worker: [...workerStarters],
});
// Exit explicitly: the embedded PostgreSQL package installs exit hooks that would otherwise
// replace the command's exit code.
process.exit(code);
