import type { Knex } from 'knex';

/** A table of the conference family: the columns every resource row has around `columns`. */
function table(name: string, columns: string): string {
  return `
    create table ${name} (
      id serial primary key,
      party_id integer not null references parties(id),
      ${columns},
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );`;
}

/**
 * The conference family (owners' meetings, docs/resources.md#conferences): conferences, the party's settings, topics
 * and their notes, resolutions and their options, voting sessions, mandates, votes, and the
 * party's templates. A child row carries the owning party of its parent (scoping reads only
 * `party_id`). The checks repeat the API's code lists so a write that bypasses the API cannot
 * store what it would refuse; the unique partial indexes close the races the API's own checks
 * leave open.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ${table(
      'conferences',
      `property_id integer not null references properties(id),
      title text not null,
      scheduled_at timestamptz,
      location text,
      status text not null default 'planned'
        check (status in ('planned', 'invited', 'in_progress', 'closed', 'cancelled')),
      notes text`,
    )}
    create index conferences_party on conferences (party_id) where deleted is null;
    create index conferences_property on conferences (property_id) where deleted is null;

    ${table(
      'conference_settings',
      `default_duration_minutes integer not null default 120 check (default_duration_minutes between 1 and 1440),
      quorum_percent smallint not null default 50 check (quorum_percent between 0 and 100),
      voting_method text not null default 'head' check (voting_method in ('head', 'share', 'unit')),
      allow_proxy_voting boolean not null default true,
      invitation_lead_days smallint not null default 21 check (invitation_lead_days between 0 and 365)`,
    )}
    -- at most one live settings record per party; also the party index
    create unique index conference_settings_party on conference_settings (party_id) where deleted is null;

    ${table(
      'topics',
      `conference_id integer not null references conferences(id),
      title text not null,
      description text,
      position integer not null check (position >= 1)`,
    )}
    create index topics_party on topics (party_id) where deleted is null;
    create index topics_conference on topics (conference_id, position) where deleted is null;

    ${table(
      'topic_notes',
      `topic_id integer not null references topics(id),
      text text not null,
      author_account_id integer references accounts(id)`,
    )}
    create index topic_notes_party on topic_notes (party_id) where deleted is null;
    create index topic_notes_topic on topic_notes (topic_id) where deleted is null;

    ${table(
      'resolutions',
      `topic_id integer not null references topics(id),
      title text not null,
      text text,
      majority text not null default 'simple' check (majority in ('simple', 'qualified', 'unanimous'))`,
    )}
    create index resolutions_party on resolutions (party_id) where deleted is null;
    create index resolutions_topic on resolutions (topic_id) where deleted is null;

    ${table(
      'resolution_options',
      `resolution_id integer not null references resolutions(id),
      label text not null,
      position integer not null check (position >= 1)`,
    )}
    create index resolution_options_party on resolution_options (party_id) where deleted is null;
    create index resolution_options_resolution on resolution_options (resolution_id, position)
      where deleted is null;

    ${table(
      'voting_sessions',
      `conference_id integer not null references conferences(id),
      resolution_id integer not null references resolutions(id),
      status text not null default 'open' check (status in ('open', 'closed')),
      opened_at timestamptz not null,
      closed_at timestamptz,
      check (closed_at is null or (status = 'closed' and closed_at >= opened_at))`,
    )}
    create index voting_sessions_party on voting_sessions (party_id) where deleted is null;
    create index voting_sessions_conference on voting_sessions (conference_id) where deleted is null;
    -- one open session per resolution; also the index of resolution_id
    create index voting_sessions_resolution on voting_sessions (resolution_id) where deleted is null;
    create unique index voting_sessions_open on voting_sessions (resolution_id)
      where deleted is null and status = 'open';

    ${table(
      'mandates',
      `conference_id integer not null references conferences(id),
      grantor_party_id integer not null references parties(id),
      proxy_party_id integer not null references parties(id),
      valid_until timestamptz,
      instructions text,
      check (proxy_party_id <> grantor_party_id)`,
    )}
    create index mandates_party on mandates (party_id) where deleted is null;
    -- one live mandate per owner and conference; also the index of conference_id
    create unique index mandates_grantor on mandates (conference_id, grantor_party_id) where deleted is null;
    create index mandates_proxy on mandates (proxy_party_id) where deleted is null;

    ${table(
      'conference_votes',
      `voting_session_id integer not null references voting_sessions(id),
      resolution_option_id integer not null references resolution_options(id),
      voter_party_id integer not null references parties(id),
      weight numeric(12, 4) not null default 1 check (weight > 0)`,
    )}
    create index conference_votes_party on conference_votes (party_id) where deleted is null;
    -- one live vote per voter and session; also the index of voting_session_id
    create unique index conference_votes_voter on conference_votes (voting_session_id, voter_party_id)
      where deleted is null;
    create index conference_votes_option on conference_votes (resolution_option_id) where deleted is null;

    ${table(
      'predefined_votes',
      `resolution_id integer not null references resolutions(id),
      resolution_option_id integer not null references resolution_options(id),
      voter_party_id integer not null references parties(id)`,
    )}
    create index predefined_votes_party on predefined_votes (party_id) where deleted is null;
    -- one live vote per voter and resolution; also the index of resolution_id
    create unique index predefined_votes_voter on predefined_votes (resolution_id, voter_party_id)
      where deleted is null;
    create index predefined_votes_option on predefined_votes (resolution_option_id) where deleted is null;

    ${table(
      'topic_templates',
      `title text not null,
      description text`,
    )}
    create index topic_templates_party on topic_templates (party_id) where deleted is null;

    ${table(
      'resolution_templates',
      `title text not null,
      text text,
      majority text not null default 'simple' check (majority in ('simple', 'qualified', 'unanimous'))`,
    )}
    create index resolution_templates_party on resolution_templates (party_id) where deleted is null;

    ${table(
      'resolution_option_templates',
      `resolution_template_id integer not null references resolution_templates(id),
      label text not null,
      position integer not null check (position >= 1)`,
    )}
    create index resolution_option_templates_party on resolution_option_templates (party_id)
      where deleted is null;
    create index resolution_option_templates_template
      on resolution_option_templates (resolution_template_id, position) where deleted is null;
  `);
}
