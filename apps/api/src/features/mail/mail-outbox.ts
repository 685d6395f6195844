import type { Knex } from '@platform/db';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** What the mail is for, e.g. `password-recovery`; lets tests and the admin UI find it. */
  kind: string;
}

/**
 * The default mail transport: writes the mail to `mail_outbox` inside the caller's transaction,
 * so a mail exists exactly when the change that sent it committed. A relay that sends the outbox
 * by SMTP would set `sent_at`.
 */
export async function sendMail(trx: Knex | Knex.Transaction, mail: Mail): Promise<void> {
  await trx('mail_outbox').insert({
    to_address: mail.to,
    subject: mail.subject,
    text_body: mail.text,
    kind: mail.kind,
  });
}
