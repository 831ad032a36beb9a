// Identity mail: the templates and the message a transport sends.

export const MAIL_TEMPLATES = ['invitation', 'password_reset'] as const;
export type MailTemplate = (typeof MAIL_TEMPLATES)[number];

export interface MailMessage {
  to: string;
  template: MailTemplate;
  subject: string;
  text: string;
  /** The single-use link the mail carries: a secret (whoever holds it can use it). */
  link: string;
}

export function renderMail(template: MailTemplate, to: string, link: string, context: { workspace_name?: string | undefined; expires_at?: string | undefined }): MailMessage {
  const expiry = context.expires_at ? `\n\nThe link works once and expires at ${context.expires_at}.` : '\n\nThe link works once.';
  switch (template) {
    case 'invitation':
      return {
        to,
        template,
        link,
        subject: `You are invited to ${context.workspace_name ?? 'a workspace'}`,
        text: `You have been invited to join ${context.workspace_name ?? 'a workspace'} on svc-service.\n\nAccept the invitation: ${link}${expiry}`,
      };
    case 'password_reset':
      return {
        to,
        template,
        link,
        subject: 'Reset your password',
        text: `Someone asked to reset the password of this account. If it was you, choose a new password: ${link}${expiry}\n\nIf it was not you, ignore this mail.`,
      };
    default: {
      const never: never = template;
      throw new Error(`unknown mail template ${String(never)}`);
    }
  }
}

/** The base of links in mail: server.public_url, else derived from server.host and port. */
export function publicBaseUrl(server: { public_url: string; host: string; port: number }): string {
  if (server.public_url !== '') return server.public_url.replace(/\/+$/, '');
  const host = server.host.includes(':') ? `[${server.host}]` : server.host;
  return `http://${host}:${server.port}`;
}
