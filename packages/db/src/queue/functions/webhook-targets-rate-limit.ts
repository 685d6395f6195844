/**
 * The trigger that keeps each endpoint's `rate_limit` in step with its registrations: the lowest
 * `rate_limit` of its live (not deleted) registrations, null when none has one
 * (docs/dispatcher.md › Rate limit). The claim reads it from the endpoint row it locks anyway,
 * so a claim over thousands of endpoints does not look at their registrations. Runs after a
 * registration is written, for the endpoint it left (a changed URL) and the one it is on.
 */
export const WEBHOOK_TARGETS_RATE_LIMIT_FUNCTION = `
    create or replace function webhook_targets_rate_limit() returns trigger
    language plpgsql as $$
    begin
      update webhook_targets t
         set rate_limit = (select min(r.rate_limit) from webhook_registrations r
                            where r.target_id = t.id and r.deleted is null)
       where t.id in (new.target_id, case when tg_op = 'UPDATE' then old.target_id end);
      return null;
    end
    $$;
`;
