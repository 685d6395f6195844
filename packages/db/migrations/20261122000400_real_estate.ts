import type { Knex } from 'knex';

/**
 * The real-estate resources below a property: its entrances (staircases), its units and the
 * tenancy or ownership contracts of a unit. The enum and range checks repeat the API's rules
 * (packages/shared/src/resources/real-estate.ts) as a backstop; the unique indexes close the race
 * the services' duplicate checks leave open.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table entrances (
      id serial primary key,
      party_id integer not null references parties(id),
      property_id integer not null references properties(id),
      name text not null,
      street text,
      house_number text,
      postal_code text,
      city text,
      notes text,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index entrances_party on entrances (party_id) where deleted is null;
    create index entrances_property on entrances (property_id) where deleted is null;
    create unique index entrances_property_name on entrances (property_id, lower(name)) where deleted is null;

    create table units (
      id serial primary key,
      party_id integer not null references parties(id),
      property_id integer not null references properties(id),
      entrance_id integer references entrances(id),
      number text not null,
      floor smallint,
      unit_type text not null default 'apartment'
        check (unit_type in ('apartment', 'commercial', 'parking', 'storage', 'other')),
      living_area numeric(8, 2) check (living_area >= 0),
      rooms numeric(4, 1) check (rooms >= 0),
      notes text,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    -- also serves the UnitCount counter of the access token's telemetry claim
    create index units_party on units (party_id) where deleted is null;
    create index units_property on units (property_id) where deleted is null;
    create index units_entrance on units (entrance_id) where deleted is null;
    create unique index units_property_number on units (property_id, lower(number)) where deleted is null;

    create table unit_contracts (
      id serial primary key,
      party_id integer not null references parties(id),
      unit_id integer not null references units(id),
      contract_party_id integer references parties(id),
      contract_type text not null
        check (contract_type in ('tenancy', 'ownership', 'commercial-lease')),
      start_date date not null,
      end_date date check (end_date >= start_date),
      monthly_rent numeric(12, 2) check (monthly_rent >= 0),
      currency text not null default 'EUR' check (currency ~ '^[A-Z]{3}$'),
      notes text,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index unit_contracts_party on unit_contracts (party_id) where deleted is null;
    create index unit_contracts_unit on unit_contracts (unit_id) where deleted is null;
    create index unit_contracts_contract_party on unit_contracts (contract_party_id) where deleted is null;
  `);
}
