/**
 * The endpoint a URL names, as isolation groups registrations (docs/decisions.md › Delivery
 * isolation): its origin (`webhook_target_origin`) followed by its path and query as written,
 * `/` for an empty path, without credentials or fragment (the receiver never sees either). Two
 * spellings of one endpoint (`HTTPS://Hooks.example:443/a` and `https://hooks.example/a`) are one.
 * (Each question mark of the pattern is escaped: knex would read a bare one as a binding.)
 */
export const WEBHOOK_ENDPOINT_URL_FUNCTION = `
    create or replace function webhook_endpoint_url(p_url text) returns text
    language sql immutable as $$
      select webhook_target_origin(p_url) || coalesce(
        (select case when m[1] = '' or left(m[1], 1) = '\\?' then '/' || m[1] else m[1] end
           from regexp_match(p_url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/\\?#]*([^#]*)') as m),
        '')
    $$;
`;
