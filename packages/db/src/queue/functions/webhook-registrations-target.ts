/**
 * The trigger that keeps each registration's `target_id` in step with its URL, whoever writes
 * it: the target of its origin (`webhook_target_origin`), created on first use.
 */
export const WEBHOOK_REGISTRATIONS_TARGET_FUNCTION = `
    create or replace function webhook_registrations_target() returns trigger
    language plpgsql as $$
    declare
      v_origin text := webhook_target_origin(new.target_url);
    begin
      insert into webhook_targets (origin) values (v_origin) on conflict (origin) do nothing;
      select t.id into new.target_id from webhook_targets t where t.origin = v_origin;
      return new;
    end
    $$;
`;
