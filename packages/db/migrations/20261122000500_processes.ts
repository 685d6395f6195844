import type { Knex } from 'knex';

/**
 * Processes (Gen1 "orders"), their feed (Gen1 "ordertimeline"), work orders (Gen1
 * "ordercontractor"), inquiries (Gen1 "inbox") and notices (Gen1 "companynews"). The checks
 * repeat the API's code lists so a write that bypasses the API cannot store what it would refuse.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table processes (
      id serial primary key,
      party_id integer not null references parties(id),
      title text not null,
      description text,
      status text not null default 'open'
        check (status in ('open', 'in_progress', 'on_hold', 'completed', 'cancelled')),
      priority smallint not null default 2 check (priority between 1 and 4),
      property_id integer references properties(id),
      unit_id integer references units(id),
      assignee_account_id integer references accounts(id),
      due_date date,
      completed_at timestamptz,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    -- also serves the telemetry claim's ProcessCount (live rows of a party)
    create index processes_party on processes (party_id) where deleted is null;
    create index processes_property on processes (property_id) where deleted is null;
    create index processes_unit on processes (unit_id) where deleted is null;
    create index processes_assignee on processes (assignee_account_id) where deleted is null;

    create table process_feed (
      id serial primary key,
      party_id integer not null references parties(id),
      process_id integer not null references processes(id),
      kind text not null default 'comment'
        check (kind in ('comment', 'status_change', 'attachment', 'message')),
      text text not null,
      author_account_id integer references accounts(id),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index process_feed_party on process_feed (party_id) where deleted is null;
    create index process_feed_process on process_feed (process_id, id) where deleted is null;

    create table work_orders (
      id serial primary key,
      party_id integer not null references parties(id),
      process_id integer references processes(id),
      contractor_party_id integer not null references parties(id),
      property_id integer references properties(id),
      unit_id integer references units(id),
      title text not null,
      description text,
      status text not null default 'requested'
        check (status in ('requested', 'accepted', 'scheduled', 'in_progress', 'completed', 'cancelled')),
      scheduled_for timestamptz,
      completed_at timestamptz,
      cost numeric(12, 2) check (cost >= 0),
      currency text not null default 'EUR' check (currency ~ '^[A-Z]{3}$'),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index work_orders_party on work_orders (party_id) where deleted is null;
    -- contractors read the work orders addressed to them through this column
    create index work_orders_contractor on work_orders (contractor_party_id) where deleted is null;
    create index work_orders_process on work_orders (process_id) where deleted is null;
    create index work_orders_property on work_orders (property_id) where deleted is null;

    -- exactly the fields of the spec's Inquiry (6.2); the receiver is the owning party
    create table inquiries (
      id serial primary key,
      receiver_party_id integer not null references parties(id),
      source_id smallint not null default 1,
      category_id smallint not null default 1,
      connected_party_id integer not null references parties(id),
      creator_account_id integer not null references accounts(id),
      creator_account_role smallint not null,
      read_status smallint not null default 0 check (read_status in (0, 1)),
      report text not null,
      subject text,
      rejection_response text,
      completion_response text,
      connected_property_id integer references properties(id),
      connected_unit_id integer references units(id),
      associated_process_id integer references processes(id),
      associated_process_feed_entry_id integer references process_feed(id),
      -- to-dos (Gen1 UserTask) have no table in this API: the id is kept as given
      associated_todo_id integer,
      priority smallint check (priority between 1 and 4),
      read_by_account_id integer references accounts(id),
      due_date date,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index inquiries_receiver on inquiries (receiver_party_id) where deleted is null;
    create index inquiries_connected_party on inquiries (connected_party_id) where deleted is null;
    create index inquiries_process on inquiries (associated_process_id) where deleted is null;

    create table notices (
      id serial primary key,
      party_id integer not null references parties(id),
      title text not null,
      body text not null,
      property_id integer references properties(id),
      published_at timestamptz,
      expires_at timestamptz,
      audience text not null default 'all' check (audience in ('all', 'owners', 'tenants')),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz,
      check (expires_at is null or published_at is null or expires_at >= published_at)
    );
    create index notices_party on notices (party_id) where deleted is null;
    create index notices_property on notices (property_id) where deleted is null;
  `);
}
