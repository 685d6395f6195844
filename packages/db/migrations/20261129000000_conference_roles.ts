import type { Knex } from 'knex';

/**
 * ConferenceRole (docs/resources.md#conferences): who holds which office in a conference (chair, minute taker,
 * scrutineer). A row of the conference family: it carries the owning party of its conference.
 * One live holder per office and conference; the unique partial index closes the race the API's
 * own check leaves open.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table conference_roles (
      id serial primary key,
      party_id integer not null references parties(id),
      conference_id integer not null references conferences(id),
      holder_party_id integer not null references parties(id),
      role text not null check (role in ('chair', 'minute_taker', 'scrutineer')),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index conference_roles_party on conference_roles (party_id) where deleted is null;
    create unique index conference_roles_office on conference_roles (conference_id, role) where deleted is null;
  `);
}
