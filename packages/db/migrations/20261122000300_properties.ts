import type { Knex } from 'knex';

/** Properties (buildings, Gen1 "objects"). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table properties (
      id serial primary key,
      party_id integer not null references parties(id),
      name text not null,
      street text not null,
      house_number text,
      postal_code text not null,
      city text not null,
      country text not null default 'DE',
      property_type text not null default 'residential',
      year_built smallint,
      notes text,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index properties_party on properties (party_id) where deleted is null;
  `);
}
