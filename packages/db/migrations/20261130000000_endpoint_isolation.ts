import type { Knex } from 'knex';
import { WEBHOOK_ENDPOINT_URL_FUNCTION } from '../src/queue/functions/webhook-endpoint-url';
import { WEBHOOK_REGISTRATIONS_TARGET_FUNCTION } from '../src/queue/functions/webhook-registrations-target';

/**
 * Isolation per endpoint, not per origin (docs/decisions.md › Delivery isolation): a row of
 * `webhook_targets` becomes one party's endpoint, its normalised URL (`webhook_endpoint_url`),
 * with the breaker as before and its `origin` kept for the dispatcher's per-host cap. Every
 * registration is pointed at its party's endpoint of its URL; the per-origin rows go, with their
 * breaker state (each endpoint's breaker starts closed and opens on its own failures). The
 * trigger (`functions/webhook-registrations-target.ts`) is created here, following a change of
 * URL or party; a database from before this release drops the per-origin trigger it had.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(WEBHOOK_ENDPOINT_URL_FUNCTION);
  await knex.raw(`
    alter table webhook_targets
      drop constraint webhook_targets_origin_key,
      add column party_id int references parties on delete cascade,
      add column url text;

    insert into webhook_targets (party_id, url, origin)
    select distinct party_id, webhook_endpoint_url(target_url), webhook_target_origin(target_url)
      from webhook_registrations;
    update webhook_registrations r set target_id = t.id
      from webhook_targets t
     where t.party_id = r.party_id and t.url = webhook_endpoint_url(r.target_url);
    delete from webhook_targets where party_id is null;

    alter table webhook_targets
      alter column party_id set not null,
      alter column url set not null,
      add constraint webhook_targets_party_id_url_key unique (party_id, url);
  `);
  // the trigger that keeps each registration on its endpoint, from its one definition
  await knex.raw(WEBHOOK_REGISTRATIONS_TARGET_FUNCTION);
  await knex.raw(`
    drop trigger if exists webhook_registrations_target on webhook_registrations;
    create trigger webhook_registrations_target before insert or update of target_url, party_id on webhook_registrations
      for each row execute function webhook_registrations_target();
  `);
}
