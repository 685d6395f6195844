/**
 * The origin of a URL, as fair scheduling and the breaker group targets: lower-case scheme and
 * host, the port unless it is the scheme's default, no credentials, path or query. (Each
 * question mark of the pattern is escaped: knex would read a bare one as a binding.)
 */
export const WEBHOOK_TARGET_ORIGIN_FUNCTION = `
    create or replace function webhook_target_origin(p_url text) returns text
    language sql immutable as $$
      select coalesce(
        (select lower(m[1]) || '://' || lower(m[2]) ||
                case when m[3] is null or m[3] = ''
                          or (lower(m[1]) = 'http' and m[3] = '80')
                          or (lower(m[1]) = 'https' and m[3] = '443') then ''
                     else ':' || m[3] end
           from regexp_match(p_url, '^([A-Za-z][A-Za-z0-9+.-]*)://(\\?:[^@/\\?#]*@)\\?(\\[[^]]*\\]|[^:/\\?#]*)(\\?::([0-9]*))\\?') as m),
        lower(p_url))
    $$;
`;
