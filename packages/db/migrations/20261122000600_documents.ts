import type { Knex } from 'knex';

/**
 * Documents (the record of a contract, an invoice, minutes …) and files (uploaded bytes, kept in
 * Postgres). A document may name its file and a file may name the document it is attached to, so
 * the two tables reference each other: the second reference is added once both exist. The checks
 * repeat the API's rules (packages/shared/src/resources/documents.ts) as a backstop.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table files (
      id serial primary key,
      party_id integer not null references parties(id),
      file_name text not null check (char_length(file_name) between 1 and 255),
      content_type text not null check (content_type ~ '^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*'),
      size_bytes bigint not null check (size_bytes >= 0),
      sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
      content bytea not null check (octet_length(content) = size_bytes),
      document_id integer,
      property_id integer references properties(id),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    -- uploads are mostly compressed already (PDF, JPEG, ZIP): store them out of line without
    -- spending time on a compression attempt that would not pay off
    alter table files alter column content set storage external;
    create index files_party on files (party_id) where deleted is null;
    create index files_document on files (document_id) where deleted is null;
    create index files_property on files (property_id) where deleted is null;

    create table documents (
      id serial primary key,
      party_id integer not null references parties(id),
      title text not null,
      category text not null default 'other'
        check (category in ('contract', 'invoice', 'protocol', 'plan', 'certificate', 'correspondence', 'other')),
      description text,
      document_date date,
      property_id integer references properties(id),
      unit_id integer references units(id),
      process_id integer references processes(id),
      file_id integer references files(id),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index documents_party on documents (party_id) where deleted is null;
    create index documents_property on documents (property_id) where deleted is null;
    create index documents_unit on documents (unit_id) where deleted is null;
    create index documents_process on documents (process_id) where deleted is null;
    -- a file is the content of at most one live document
    create unique index documents_file on documents (file_id) where deleted is null;

    alter table files add constraint files_document_id_fkey foreign key (document_id) references documents(id);
  `);
}
