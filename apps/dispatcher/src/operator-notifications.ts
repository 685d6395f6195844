import type { Knex } from '@platform/db';
import { signStandardWebhook, type DeliveryOutcome, type DeliveryRequest } from '@platform/delivery';
import { WEBHOOK_USER_AGENT } from '@platform/shared';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock';

/** Operator webhooks one turn claims at most. */
export const OPERATOR_NOTIFICATION_BATCH = 20;
/** Tries of one operator webhook before it is given up (`failed_at`). */
export const OPERATOR_NOTIFICATION_MAX_ATTEMPTS = 8;
/** How long a claimed operator webhook is kept from other replicas while it is sent. */
const CLAIM_MS = 5 * 60_000;

/** The wait after the n-th failed try: 30 s, doubling, at most an hour. */
export const operatorNotificationBackoffMs = (attempts: number): number =>
  Math.min(30_000 * 2 ** Math.max(attempts - 1, 0), 3_600_000);

export interface OperatorNotifierOptions {
  knex: Knex;
  logger: Logger;
  /** Sends one request: the dispatcher's Deliverer (its timeout, private-address rule, no redirects). */
  deliver(request: DeliveryRequest): Promise<DeliveryOutcome>;
  /** Opens the sealed signing secret of a party's operator webhook. */
  openSecret(sealed: string): string;
  intervalMs: number;
  clock?: Clock;
  /** Told of each turn's figures. */
  onTurn?(report: OperatorNotifierReport): void;
}

export interface OperatorNotifierReport {
  /** Breakers told as open for too long (`webhook_breakers_notify`). */
  breakersTold: number;
  /** Operator webhooks answered 2xx, tried again later, and given up. */
  delivered: number;
  retrying: number;
  failed: number;
}

interface ClaimedRow {
  id: string;
  party_id: number;
  payload: unknown;
  url: string;
  attempts: number;
  webhook_secret: string | null;
}

/**
 * Notifications to operators (docs/dispatcher.md#operator-notifications). Every
 * `intervalMs`, on every replica: tells the breakers open for longer than their party's threshold
 * (`webhook_breakers_notify`: the mails and the operator webhook rows, in one transaction, once
 * per opening), then sends the due operator webhooks, each signed with the party's operator
 * secret as Standard Webhooks (`webhook-id` `opn_<id>`), claimed with SKIP LOCKED so replicas
 * share them. A 2xx delivers it; anything else tries again after `operatorNotificationBackoffMs`,
 * up to OPERATOR_NOTIFICATION_MAX_ATTEMPTS tries. Not through the webhook queue: see the doc.
 */
export class OperatorNotifier {
  private timer: unknown;
  private running: Promise<unknown> | undefined;
  private stopping = false;
  private readonly clock: Clock;

  constructor(private readonly options: OperatorNotifierOptions) {
    this.clock = options.clock ?? systemClock;
  }

  start(): void {
    const schedule = () => {
      this.timer = this.clock.setTimeout(() => {
        this.running = this.turn()
          .catch((error: unknown) =>
            this.options.logger.error({ err: error }, 'operator notifications failed'),
          )
          .finally(() => {
            if (!this.stopping) schedule();
          });
      }, this.options.intervalMs);
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    await this.running;
  }

  /** One turn: the breakers' notices, then the due operator webhooks. */
  async turn(): Promise<OperatorNotifierReport> {
    const { knex } = this.options;
    const told = await knex.raw<{ rows: { told: number }[] }>('select webhook_breakers_notify() as told');
    const report: OperatorNotifierReport = {
      breakersTold: told.rows[0]?.told ?? 0,
      delivered: 0,
      retrying: 0,
      failed: 0,
    };
    const claimed = await knex.raw<{ rows: ClaimedRow[] }>(
      `update operator_notifications n
          set next_attempt_at = now() + make_interval(secs => ? / 1000.0), attempts = n.attempts + 1
         from (select id from operator_notifications
                where delivered_at is null and failed_at is null and next_attempt_at <= now()
                order by next_attempt_at, id limit ? for update skip locked) d
        where n.id = d.id
       returning n.id, n.party_id, n.payload, n.url, n.attempts,
                 (select s.webhook_secret from webhook_notification_settings s where s.party_id = n.party_id)`,
      [CLAIM_MS, OPERATOR_NOTIFICATION_BATCH],
    );
    await Promise.all(
      claimed.rows.map(async (row) => {
        const result = await this.send(row);
        report[result] += 1;
      }),
    );
    if (report.breakersTold + claimed.rows.length > 0) {
      this.options.logger.info({ ...report }, 'operator notifications');
    }
    this.options.onTurn?.(report);
    return report;
  }

  private async send(row: ClaimedRow): Promise<'delivered' | 'retrying' | 'failed'> {
    const { knex, logger } = this.options;
    let outcome: Pick<DeliveryOutcome, 'statusCode' | 'errorKind'> & { message?: string };
    if (row.webhook_secret === null) {
      // the party removed its operator webhook since: nothing to sign with, nobody to tell
      outcome = { statusCode: null, errorKind: 'internal', message: 'the party has no operator webhook now' };
    } else {
      const id = `opn_${row.id}`;
      const timestamp = Math.floor(this.clock.now() / 1000);
      const body = JSON.stringify(row.payload);
      outcome = await this.options.deliver({
        url: row.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook(
            this.options.openSecret(row.webhook_secret),
            id,
            timestamp,
            body,
          ),
        },
      });
    }
    const delivered = outcome.errorKind === null;
    const givenUp =
      !delivered && (row.webhook_secret === null || row.attempts >= OPERATOR_NOTIFICATION_MAX_ATTEMPTS);
    await knex('operator_notifications')
      .where({ id: row.id })
      .update({
        last_status: outcome.statusCode,
        last_error: delivered ? null : (outcome.message ?? outcome.errorKind),
        ...(delivered ? { delivered_at: knex.fn.now() } : {}),
        ...(givenUp ? { failed_at: knex.fn.now() } : {}),
        ...(!delivered && !givenUp
          ? {
              next_attempt_at: knex.raw(`now() + make_interval(secs => ? / 1000.0)`, [
                operatorNotificationBackoffMs(row.attempts),
              ]),
            }
          : {}),
      });
    if (!delivered) {
      logger.warn(
        {
          notificationId: row.id,
          partyId: row.party_id,
          statusCode: outcome.statusCode,
          errorKind: outcome.errorKind,
          givenUp,
        },
        'operator webhook not delivered',
      );
    }
    return delivered ? 'delivered' : givenUp ? 'failed' : 'retrying';
  }
}
