/**
 * The trigger that keeps each registration's `target_id` in step with its party and URL, whoever
 * writes them: the party's endpoint of that URL (`webhook_endpoint_url`) in `webhook_targets`,
 * created on first use with its origin (`webhook_target_origin`) in the registration's bucket
 * (which its writer sets: ../../buckets.ts). Registrations of one party with one URL share an
 * endpoint; another party's registration of the same URL has its own. The conflict target is the key's name, not its columns: on the
 * bucket-partitioned layout (packages/db/tests/bucket-layout.ts) the same key leads with the bucket.
 */
export const WEBHOOK_REGISTRATIONS_TARGET_FUNCTION = `
    create or replace function webhook_registrations_target() returns trigger
    language plpgsql as $$
    declare
      v_url text := webhook_endpoint_url(new.target_url);
    begin
      insert into webhook_targets (party_id, url, origin, bucket)
      values (new.party_id, v_url, webhook_target_origin(new.target_url), new.bucket)
      on conflict on constraint webhook_targets_party_id_url_key do nothing;
      select t.id into new.target_id from webhook_targets t where t.party_id = new.party_id and t.url = v_url;
      return new;
    end
    $$;
`;
