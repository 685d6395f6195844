import type { Knex } from 'knex';

/**
 * Contact details of a party (Gen1 "companycontact"): the company's own addresses, numbers and
 * links, distinct from the contact details of its accounts. The parties table itself comes from
 * the identity migration and needs nothing more.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table contact_details (
      id serial primary key,
      party_id integer not null references parties(id),
      type text not null check (type in ('email', 'phone', 'mobile', 'fax', 'website', 'address')),
      value text not null check (length(value) between 1 and 2048),
      label text check (length(label) between 1 and 100),
      is_primary boolean not null default false,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index contact_details_party on contact_details (party_id) where deleted is null;
    -- at most one live primary detail per party and type; the API demotes the previous one first
    create unique index contact_details_primary on contact_details (party_id, type)
      where is_primary and deleted is null;
  `);
}
