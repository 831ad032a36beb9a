import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJobContext, deliverOutbox, type JobContext } from '../../../jobs/index.js';
import { createTestDatabase, query, type TestDatabase } from '../../support/database.js';
import { Client, login, seedOrganization, type Seeded } from '../../support/identity.js';
import { startTestService, type TestService } from '../../support/service.js';
import { SmtpSink } from './smtp-sink.js';

const test = suite('api/invitations/invitations');
let db: TestDatabase;
let service: TestService;
let seeded: Seeded;
let admin: Client;
let smtp: SmtpSink;
let jobs: JobContext;
const anonymous = () => new Client(service.url);
const sendMail = () => deliverOutbox(jobs, { kinds: ['email'] });

test.before(async () => {
  db = await createTestDatabase('invite');
  smtp = await new SmtpSink().start();
  service = await startTestService({
    databaseUrl: db.url,
    env: { SVC_MAIL__SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SVC_SERVER__PUBLIC_URL: 'https://svc.example.test', SVC_CONTROL__SCAN_SECONDS: '3600' },
  });
  seeded = await seedOrganization(db.url);
  admin = await login(service.url, seeded.admin.email, seeded.admin.password, seeded.workspace_id);
  jobs = createJobContext(service.services);
});
test.after(async () => {
  await service?.stop();
  await smtp?.stop();
  await db?.drop();
});

test('an invitation mail reaches the SMTP server and its link creates the account once', async () => {
  const invited = await admin.post('/api/v1/invitations', { email: 'New.Person@Example.com', role: 'member' });
  assert.is(invited.status, 201, JSON.stringify(invited.body));
  assert.not.ok(JSON.stringify(invited.body).includes('svi_'), 'the token travels only by mail');
  assert.is(smtp.mails.length, 0, 'mail goes through the outbox');
  const sent = await sendMail();
  assert.is(sent.email!.delivered, 1);
  assert.is(smtp.mails.length, 1);
  assert.ok(smtp.mails[0]!.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=').includes('https://svc.example.test/accept-invitation?token='));
  const token = smtp.tokenFor('New.Person@example.com');
  const rows = await query<{ payload: string }>(db.url, `select payload::text from outbox where kind = 'email'`);
  assert.not.ok(rows[0]!.payload.includes(token), 'the stored mail is sealed');
  assert.is((await anonymous().post('/api/v1/invitations/accept', { token })).status, 400, 'a new account needs a password');
  const accepted = await anonymous().post('/api/v1/invitations/accept', { token, password: 'new-person-pass', name: 'New Person' });
  assert.is(accepted.status, 201, JSON.stringify(accepted.body));
  assert.is(accepted.body.role, 'member');
  assert.is(accepted.body.workspace_id, seeded.workspace_id);
  assert.is((await anonymous().post('/api/v1/invitations/accept', { token, password: 'new-person-pass' })).status, 400, 'the link works once');
  const session = await login(service.url, 'New.Person@example.com', 'new-person-pass', seeded.workspace_id);
  assert.is((await session.get('/api/v1/members')).status, 200);
});

test('an expired invitation link fails; a member may not invite', async () => {
  await admin.post('/api/v1/invitations', { email: 'late@example.com', role: 'viewer' });
  await sendMail();
  const token = smtp.tokenFor('late@example.com');
  await query(db.url, `update invitations set expires_at = now() - interval '1 second' where email = 'late@example.com'`);
  assert.is((await anonymous().post('/api/v1/invitations/accept', { token, password: 'late-person-pass' })).status, 400);
  const member = await login(service.url, 'New.Person@example.com', 'new-person-pass', seeded.workspace_id);
  assert.is((await member.post('/api/v1/invitations', { email: 'x@example.com', role: 'viewer' })).status, 403);
});

test('password reset: always 202, the link works once, ends sessions, and expires', async () => {
  const old = await login(service.url, seeded.admin.email, seeded.admin.password);
  const unknown = await anonymous().post('/api/v1/auth/password-reset', { email: 'nobody@example.com' });
  const known = await anonymous().post('/api/v1/auth/password-reset', { email: seeded.admin.email });
  assert.is(unknown.status, 202);
  assert.is(known.status, 202);
  assert.equal(unknown.body, known.body, 'no user enumeration');
  const before = smtp.mails.length;
  await sendMail();
  assert.is(smtp.mails.length, before + 1, 'one mail, for the known address only');
  const token = smtp.tokenFor(seeded.admin.email);
  assert.is((await anonymous().post('/api/v1/auth/password-reset/confirm', { token, password: 'short' })).status, 400);
  assert.is((await anonymous().post('/api/v1/auth/password-reset/confirm', { token, password: 'brand-new-password' })).status, 200, 'a weak password did not burn the link');
  assert.is((await anonymous().post('/api/v1/auth/password-reset/confirm', { token, password: 'another-password' })).status, 400, 'used once');
  assert.is((await old.get('/api/v1/me')).status, 401, 'existing sessions end');
  await login(service.url, seeded.admin.email, 'brand-new-password');
  await anonymous().post('/api/v1/auth/password-reset', { email: seeded.admin.email });
  await sendMail();
  const second = smtp.tokenFor(seeded.admin.email);
  await query(db.url, `update mail_links set expires_at = now() - interval '1 second' where used_at is null`);
  assert.is((await anonymous().post('/api/v1/auth/password-reset/confirm', { token: second, password: 'yet-another-pass' })).status, 400, 'expired');
});

test.run();
