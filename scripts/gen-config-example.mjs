// Writes service.toml.example from the config schema: every key with its description and
// default, commented out (the defaults apply without them). Run after changing the schema:
//   npm run build && node scripts/gen-config-example.mjs
import { writeFileSync } from 'node:fs';
import { ServiceConfig, OUTBOX_POLICY_DEFAULTS, OUTBOX_KINDS } from '../dist/runtime/config/index.js';

const toml = (v) => (typeof v === 'string' ? JSON.stringify(v) : Array.isArray(v) ? `[${v.map(toml).join(', ')}]` : String(v));
const lines = [
  '# svc-service configuration. Every key is optional; shown values are the defaults.',
  '# Start a process with: svc-service --config service.toml run --role <all|control|worker>',
  '# Environment overrides: SVC_<SECTION>__<KEY>=value (JSON values allowed), e.g. SVC_WORKER__SLOTS=16,',
  '# SVC_OUTBOX__DEFAULTS=\'{"max_attempts":5}\', SVC_OUTBOX__BY_KIND=\'{"webhook":{"lease_seconds":30}}\'.',
  '# Relative paths are resolved against the folder of this file.',
  '',
];
for (const [section, schema] of Object.entries(ServiceConfig.properties)) {
  if (section === 'outbox') continue;
  lines.push(`[${section}]`);
  for (const [key, field] of Object.entries(schema.properties)) {
    lines.push(`# ${field.description}`);
    lines.push(`# ${key} = ${toml(field.default)}`);
  }
  lines.push('');
}
lines.push('# Outbox policy (spec 8): defaults for every kind, and per-kind overrides that inherit');
lines.push(`# unspecified fields. Kinds: ${OUTBOX_KINDS.join(', ')}. Unknown fields or kinds fail startup.`);
lines.push('[outbox.defaults]');
const patch = ServiceConfig.properties.outbox.properties.defaults;
for (const [key, value] of Object.entries(OUTBOX_POLICY_DEFAULTS)) {
  lines.push(`# ${patch.properties[key].description}`);
  lines.push(`# ${key} = ${value}`);
}
lines.push('');
lines.push('# [outbox.by_kind.webhook]');
lines.push('# max_attempts = 12');
lines.push('');
writeFileSync(new URL('../service.toml.example', import.meta.url), lines.join('\n'));
