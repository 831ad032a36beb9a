import { randomBytes, randomFillSync } from 'node:crypto';

// Crockford base32: ids sort by creation time (48-bit millisecond prefix) and carry 80 random
// bits, so cursors over ids follow creation order and ids are unguessable.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/**
 * The random part of ids, drawn from the CSPRNG 4 KiB at a time rather than 10 bytes per id
 * (randomFillSync was 1.2 % of a control process's CPU under the POST load); every byte is
 * used once.
 */
const RANDOM_POOL = Buffer.alloc(4096);
let randomOffset = RANDOM_POOL.length;

function randomTen(): Buffer {
  if (randomOffset + 10 > RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    randomOffset = 0;
  }
  randomOffset += 10;
  return RANDOM_POOL.subarray(randomOffset - 10, randomOffset);
}

/** A kind-prefixed, time-sortable id: `ap_01jf…`. */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${encodeTime(now)}${encodeRandom(randomTen())}`;
}

/** A random secret token with a fixed prefix (API keys `svk_`, login sessions `svs_`). */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export const ID_PREFIX = {
  organization: 'org',
  workspace: 'ws',
  user: 'usr',
  membership: 'mem',
  apiKey: 'key',
  loginSession: 'ls',
  auditEvent: 'aud',
  agent: 'ap',
  agentRevision: 'apr',
  skill: 'sk',
  skillRevision: 'skr',
  provider: 'prv',
  session: 'ses',
  thread: 'thr',
  inboxEntry: 'ent',
  run: 'run',
  attempt: 'att',
  item: 'itm',
  subscription: 'sub',
  delivery: 'dlv',
  outbox: 'obx',
  invitation: 'inv',
  request: 'req',
  finding: 'fnd',
  findingAnalysis: 'fan',
  asset: 'ast',
  connection: 'con',
  connectionOperation: 'cop',
  environmentTemplate: 'envt',
  environment: 'env',
  memory: 'mry',
} as const;

/** Identifies one worker process in leases and attempt rows (host, pid and a random part). */
export function randomWorkerId(): string {
  return `wrk_${process.pid}_${randomBytes(4).toString('hex')}`;
}
