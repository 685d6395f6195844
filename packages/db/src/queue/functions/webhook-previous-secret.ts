/**
 * A registration's previous signing secret while its rotation's overlap lasts, else null: the
 * one rule the deliveries and the API's test event sign by.
 */
export const WEBHOOK_PREVIOUS_SECRET_FUNCTION = `
    create or replace function webhook_previous_secret(p_secret text, p_expires_at timestamptz) returns text
    language sql stable as $$
      select case when p_expires_at > now() then p_secret end
    $$;
`;
