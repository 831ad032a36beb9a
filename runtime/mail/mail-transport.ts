import nodemailer from 'nodemailer';
import type { Logger } from '../log/index.js';
import type { MailMessage } from './mail-message.js';

export interface MailTransport {
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * SMTP when mail.smtp_url is set (smtp:// with STARTTLS when offered, smtps:// for implicit
 * TLS, credentials in the URL), else the log transport. Links are secrets: the log transport
 * records only that a mail was sent and to whom at info level; the text with the link is
 * logged at debug level only (for development setups without SMTP).
 */
export function createMailTransport(mail: { smtp_url: string; from: string }, logger: Logger, options: { timeoutMs?: number } = {}): MailTransport {
  if (mail.smtp_url === '') return logTransport(logger);
  const timeout = options.timeoutMs ?? 15_000;
  const transporter = nodemailer.createTransport({ url: mail.smtp_url, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout });
  return {
    kind: 'smtp',
    async send(message) {
      await transporter.sendMail({ from: mail.from, to: message.to, subject: message.subject, text: message.text });
      logger.info({ to: message.to, template: message.template, transport: 'smtp' }, 'mail sent');
    },
    close: () => transporter.close(),
  };
}

function logTransport(logger: Logger): MailTransport {
  return {
    kind: 'log',
    async send(message) {
      logger.info({ to: message.to, template: message.template, subject: message.subject, transport: 'log' }, 'mail sent (log transport; set mail.smtp_url to send it)');
      logger.debug({ to: message.to, template: message.template, text: message.text }, 'mail text (log transport, debug only: the link is a secret)');
    },
    close: () => undefined,
  };
}
