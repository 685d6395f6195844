import type { Knex } from 'knex';
import { arrays } from './sql';

/** Which of a dispatcher's buffered webhooks must not be sent now. */
export interface StoppedDeliveries {
  /** Registrations no longer active (paused, disabled) or deleted. */
  registrations: number[];
  /** Endpoints held by a `Retry-After`, and for how much longer (ms, by the database's clock). */
  held: { id: number; heldForMs: number }[];
}

const STOPPED_DELIVERIES = `select
  array(select id from webhook_registrations
         where id = any(?::int[]) and (status <> 'active' or deleted is not null)) as registrations,
  coalesce((select json_agg(json_build_object('id', id,
                                              'heldForMs', extract(epoch from hold_until - now()) * 1000))
              from webhook_targets where id = any(?::int[]) and hold_until > now()), '[]') as held`;

/**
 * Asks, for the registrations and endpoints a dispatcher holds buffered webhooks of, which may not
 * be delivered now: two primary-key lookups per id, run only on the `stopped` notification
 * (`DELIVERIES_STOPPED_PAYLOAD`), never per delivery.
 */
export async function stoppedDeliveries(
  knex: Knex,
  registrationIds: readonly number[],
  targetIds: readonly number[],
): Promise<StoppedDeliveries> {
  if (registrationIds.length === 0 && targetIds.length === 0) return { registrations: [], held: [] };
  const { rows } = await knex.raw<{ rows: StoppedDeliveries[] }>(
    STOPPED_DELIVERIES,
    arrays([registrationIds, targetIds]),
  );
  return rows[0]!;
}
