import { inBuckets } from '../sql';

/**
 * An operator says a registration's endpoint is fixed (a resume, a retry, a recover, a test
 * event): its endpoint's breaker half-opens at once, so the next delivery is the trial, with no
 * cool-down to wait out. A closed breaker is left alone. `p_buckets` as the caller's (`inBuckets`).
 */
export const WEBHOOK_TARGET_HALF_OPEN_FUNCTION = `
    create or replace function webhook_target_half_open(p_registration_id int, p_buckets int[] default null)
    returns void
    language sql as $$
      update webhook_targets t
         set breaker_state = 'half-open', trial_until = null, state_changed = now()
        from webhook_registrations r
       where ${inBuckets('r')} and r.id = p_registration_id
         and ${inBuckets('t')} and t.id = r.target_id and t.breaker_state <> 'closed'
    $$;
`;
