import { DEFAULT_BREAKER_OPEN_MINUTES } from '@platform/shared';

/**
 * Who a party's notification mails go to (docs/admin.md#notifications): the addresses its
 * settings list, or, when it set none (`emails` null), its live accounts holding a Webhook
 * permission. The one rule; `GET /api/webhook-notifications/{partyId}` answers it as `recipients`.
 */
export const WEBHOOK_NOTIFICATION_RECIPIENTS_FUNCTION = `
    create or replace function webhook_notification_recipients(p_party_id int) returns setof text
    language sql stable as $$
      select distinct e.email
        from webhook_notification_settings s, unnest(s.emails) as e(email)
       where s.party_id = p_party_id and s.emails is not null
      union
      select distinct ac.email
        from accounts ac
       where ac.party_id = p_party_id and ac.deleted is null
         and not exists (select 1 from webhook_notification_settings s
                          where s.party_id = p_party_id and s.emails is not null)
         and exists (select 1 from account_group_permissions gp join permissions p on p.id = gp.permission_id
                      where gp.group_id = ac.group_id and p.resource = 'Webhook')
    $$;
`;

/**
 * Tells a party's operators of an event, in the caller's transaction: a mail (kind `webhook-` +
 * p_kind) to each recipient, and, when the party set an operator webhook, its row in
 * `operator_notifications` (the dispatcher sends it, signed; docs/dispatcher.md#operator-notifications).
 */
export const WEBHOOK_NOTIFY_FUNCTION = `
    create or replace function webhook_notify(
      p_party_id int, p_kind text, p_subject text, p_text text, p_payload jsonb
    ) returns void
    language plpgsql as $$
    declare
      v_email text;
    begin
      -- one statement per recipient, none calling a function over a table (Citus, R3: docs/scaling.md)
      for v_email in select r from webhook_notification_recipients(p_party_id) r loop
        insert into mail_outbox (to_address, subject, text_body, kind)
        values (v_email, p_subject, p_text, 'webhook-' || p_kind);
      end loop;
      insert into operator_notifications (party_id, kind, payload, url)
      select s.party_id, p_kind, p_payload || jsonb_build_object('type', p_kind, 'partyId', s.party_id,
                                                                 'occurredAt', now()), s.webhook_url
        from webhook_notification_settings s
       where s.party_id = p_party_id and s.webhook_url is not null;
    end
    $$;
`;

/**
 * The breakers that stayed open longer than their party's `breaker_open_minutes` (15 by
 * default) and were not told yet: each is marked told (`open_notified_at`) and told, in one
 * transaction, so an opening is told once however many deliveries it skips; a breaker that
 * closes is told again only when it opens again. Only endpoints with an active registration;
 * the dispatcher calls it every DISPATCHER_NOTIFY_INTERVAL. Answers how many it told.
 */
export const WEBHOOK_BREAKERS_NOTIFY_FUNCTION = `
    create or replace function webhook_breakers_notify() returns int
    language plpgsql as $$
    declare
      told int := 0;
      t record;
      v_ids text;
      v_id_list jsonb;
    begin
      for t in
        update webhook_targets w
           set open_notified_at = now()
          from (select o.id from webhook_targets o
                  left join webhook_notification_settings s on s.party_id = o.party_id
                 where o.open_since is not null and o.open_notified_at is null
                   and o.open_since <= now() - make_interval(mins => coalesce(s.breaker_open_minutes, ${DEFAULT_BREAKER_OPEN_MINUTES}))
                   and exists (select 1 from webhook_registrations r
                                where r.target_id = o.id and r.deleted is null and r.status = 'active')
                 order by o.id
                   for no key update of o skip locked) d
         where w.id = d.id
        returning w.id, w.party_id, w.url, w.open_since
      loop
        -- read first: the call below is over no table (Citus, R3)
        select string_agg(r.id::text, ', ' order by r.id), coalesce(jsonb_agg(r.id order by r.id), '[]')
          into v_ids, v_id_list
          from webhook_registrations r
         where r.target_id = t.id and r.deleted is null;
        perform webhook_notify(
          t.party_id, 'breaker-open',
          format('Webhook deliveries to %s are held: its endpoint keeps failing', t.url),
          format(E'The circuit breaker of the endpoint %s has been open since %s: its deliveries keep failing, '
                 'so the dispatcher holds them and tries again now and then. Nothing is lost; they are delivered '
                 'in order once the endpoint answers again. Registrations: %s.',
                 t.url, to_char(t.open_since at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'), v_ids),
          jsonb_build_object('targetUrl', t.url, 'openSince', t.open_since, 'registrationIds', v_id_list));
        told := told + 1;
      end loop;
      return told;
    end
    $$;
`;
