import {
  ConferenceRead,
  ConferenceRoleRead,
  ConferenceRoleWrite,
  ConferenceSettingsRead,
  ConferenceSettingsWrite,
  ConferenceVoteRead,
  ConferenceVoteWrite,
  ConferenceWrite,
  MandateRead,
  MandateWrite,
  PartyType,
  PredefinedVoteRead,
  PredefinedVoteWrite,
  ResolutionOptionRead,
  ResolutionOptionTemplateRead,
  ResolutionOptionTemplateWrite,
  ResolutionOptionWrite,
  ResolutionRead,
  ResolutionTemplateRead,
  ResolutionTemplateWrite,
  ResolutionWrite,
  TopicNoteRead,
  TopicNoteWrite,
  TopicRead,
  TopicTemplateRead,
  TopicTemplateWrite,
  TopicWrite,
  VotingSessionRead,
  VotingSessionWrite,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import type { z } from 'zod';
import type { FieldType } from '../../http/collection';
import { AppError, fieldError } from '../../http/errors';
import { decimal, withMeta, iso } from '../present';
import {
  defineResource,
  snake,
  snakeColumns,
  tableFields,
  type ResourceDefinition,
  type Row,
} from '../resource';

type Owner = NonNullable<ResourceDefinition['owner']>;
type Derive = NonNullable<ResourceDefinition['derive']>;
type BeforeDelete = NonNullable<ResourceDefinition['beforeDelete']>;

/** A read field as its column holds it: timestamps as ISO 8601, `numeric` (a string in pg) as a number. */
function presentValue(type: FieldType, value: unknown): unknown {
  if (type === 'timestamp') return iso(value);
  if (type === 'number') return decimal(value);
  return value ?? null;
}

interface ConferenceResourceSpec extends Omit<
  ResourceDefinition,
  'permission' | 'conference' | 'columns' | 'collection' | 'present' | 'read' | 'write'
> {
  read: z.ZodObject;
  write: z.ZodObject;
  /**
   * The read fields after `id`, the bookkeeping fields and `partyId`, in the read shape's order,
   * with their types. Every column is the field's snake_case name; all are searchable.
   */
  fields: Record<string, FieldType>;
  /** Sortable fields besides `id`, `created` and `lastModified`. */
  sortable: readonly string[];
}

/**
 * A resource of the conference family: behind the conference feature, under the `Conference`
 * permission, and (as every table of the family is named by the same rule) with its columns,
 * collection and presenter derived from the field list.
 */
function defineConferenceResource({ fields, sortable, ...spec }: ConferenceResourceSpec): ResourceDefinition {
  const writable = Object.keys(spec.write.shape).filter((field) => field !== 'partyId');
  const all: Record<string, FieldType> = {
    id: 'integer',
    partyId: 'integer',
    ...fields,
    created: 'timestamp',
    lastModified: 'timestamp',
  };
  return defineResource({
    ...spec,
    permission: 'Conference',
    conference: true,
    columns: snakeColumns(writable),
    collection: {
      fields: tableFields(spec.table, all),
      sortable: ['id', ...sortable, 'created', 'lastModified'],
      tieBreaker: `${spec.table}.id`,
    },
    present: (row) =>
      withMeta(row, {
        partyId: row.party_id as number,
        ...Object.fromEntries(
          Object.entries(fields).map(([field, type]) => [field, presentValue(type, row[snake(field)])]),
        ),
      }),
  });
}

/**
 * A child row belongs to the party of its parent (`field` names the parent in the body). The
 * parent is share-locked, so a concurrent delete of it waits and then sees this child (and a
 * deleted parent is not found here); the relation check that follows refuses a parent the caller
 * cannot see, so the fallback party is never written.
 */
function partyOfParent(parentTable: string, field: string): Owner {
  return async (body, { trx, principal }) => {
    const parent = await trx(parentTable)
      .where({ id: body[field] })
      .whereNull('deleted')
      .forShare()
      .first('party_id');
    return { party_id: (parent?.party_id as number | undefined) ?? principal.partyId };
  };
}

/** Refuses (409) to delete a row while live rows of `children` point at it. */
function refuseWhileChildren(
  name: string,
  children: readonly [table: string, column: string, what: string][],
) {
  const beforeDelete: BeforeDelete = async (current, { trx }) => {
    for (const [table, column, what] of children) {
      const child = await trx(table)
        .where({ [column]: current.id })
        .whereNull('deleted')
        .first('id');
      if (child) {
        throw new AppError('Conflict', `${name} ${current.id} still has ${what}; delete them first`);
      }
    }
  };
  return beforeDelete;
}

/** A new row without a `position` goes after the last live one of its parent. */
function appendPosition(table: string, parentColumn: string): Derive {
  return async (values, { trx, current }) => {
    if (current || values.position !== undefined) return {};
    const [row] = await trx(table)
      .where({ [parentColumn]: values[parentColumn] })
      .whereNull('deleted')
      .max<{ max: number | null }[]>({ max: 'position' });
    return { position: (row?.max ?? 0) + 1 };
  };
}

/**
 * A 409 when another live row of `table` matches `match`. The unique index closes the race
 * between two writers; this check only lets the answer say what clashed.
 */
async function assertNoOther(
  trx: Knex.Transaction,
  table: string,
  match: Record<string, unknown>,
  self: Row | undefined,
  message: string,
): Promise<void> {
  const other = await trx(table)
    .where(match)
    .whereNull('deleted')
    .modify((query) => {
      if (self) query.whereNot({ id: self.id });
    })
    .first('id');
  if (other) throw new AppError('Conflict', message);
}

/** A 400 naming `field` when the option `optionId` is not one of resolution `resolutionId`. */
async function assertOptionOf(
  trx: Knex.Transaction,
  optionId: unknown,
  resolutionId: unknown,
  field: string,
): Promise<void> {
  const option = await trx('resolution_options').where({ id: optionId }).first('resolution_id');
  if (option && option.resolution_id !== resolutionId) {
    throw fieldError(
      field,
      `ResolutionOption ${String(optionId)} is not an option of resolution ${String(resolutionId)}`,
    );
  }
}

/** The voting session of a vote, share-locked so it cannot close while the vote is written. */
async function openSession(trx: Knex.Transaction, sessionId: unknown): Promise<{ resolution_id: number }> {
  const session = await trx('voting_sessions')
    .where({ id: sessionId })
    .forShare()
    .first('status', 'resolution_id');
  if (session?.status !== 'open') {
    throw new AppError(
      'Conflict',
      `Voting session ${String(sessionId)} is closed; its votes no longer change`,
    );
  }
  return session;
}

const party = (name: string) => ({ table: 'parties', name, partyColumn: 'id' });

export const conferenceResource = defineConferenceResource({
  name: 'Conference',
  path: '/api/conferences',
  table: 'conferences',
  read: ConferenceRead,
  write: ConferenceWrite,
  fields: {
    propertyId: 'integer',
    title: 'string',
    scheduledAt: 'timestamp',
    location: 'string',
    status: 'string',
    notes: 'string',
  },
  sortable: ['title', 'scheduledAt', 'status', 'propertyId'],
  relations: { propertyId: { table: 'properties', name: 'Property' } },
  beforeDelete: refuseWhileChildren('Conference', [
    ['topics', 'conference_id', 'topics'],
    ['voting_sessions', 'conference_id', 'voting sessions'],
    ['mandates', 'conference_id', 'mandates'],
    ['conference_roles', 'conference_id', 'roles'],
  ]),
});

export const settingsResource = defineConferenceResource({
  name: 'Settings',
  path: '/api/conference-settings',
  table: 'conference_settings',
  read: ConferenceSettingsRead,
  write: ConferenceSettingsWrite,
  fields: {
    defaultDurationMinutes: 'integer',
    quorumPercent: 'integer',
    votingMethod: 'string',
    allowProxyVoting: 'boolean',
    invitationLeadDays: 'integer',
  },
  sortable: ['partyId'],
  async validate(values, { trx, current }) {
    if (current) return;
    await assertNoOther(
      trx,
      'conference_settings',
      { party_id: values.party_id },
      undefined,
      `Party ${String(values.party_id)} already has conference settings; change them instead`,
    );
  },
});

export const topicResource = defineConferenceResource({
  name: 'Topic',
  path: '/api/topics',
  table: 'topics',
  read: TopicRead,
  write: TopicWrite,
  fields: { conferenceId: 'integer', title: 'string', description: 'string', position: 'integer' },
  sortable: ['conferenceId', 'position', 'title'],
  relations: { conferenceId: { table: 'conferences', name: 'Conference' } },
  createOnly: ['conferenceId'],
  owner: partyOfParent('conferences', 'conferenceId'),
  derive: appendPosition('topics', 'conference_id'),
  beforeDelete: refuseWhileChildren('Topic', [
    ['topic_notes', 'topic_id', 'notes'],
    ['resolutions', 'topic_id', 'resolutions'],
  ]),
});

export const topicNoteResource = defineConferenceResource({
  name: 'TopicNote',
  path: '/api/topic-notes',
  table: 'topic_notes',
  read: TopicNoteRead,
  write: TopicNoteWrite,
  fields: { topicId: 'integer', text: 'string', authorAccountId: 'integer' },
  sortable: ['topicId'],
  relations: { topicId: { table: 'topics', name: 'Topic' } },
  createOnly: ['topicId'],
  owner: partyOfParent('topics', 'topicId'),
  derive: (_values, { current, principal }) => (current ? {} : { author_account_id: principal.accountId }),
});

export const resolutionResource = defineConferenceResource({
  name: 'Resolution',
  path: '/api/resolutions',
  table: 'resolutions',
  read: ResolutionRead,
  write: ResolutionWrite,
  fields: { topicId: 'integer', title: 'string', text: 'string', majority: 'string' },
  sortable: ['topicId', 'title', 'majority'],
  relations: { topicId: { table: 'topics', name: 'Topic' } },
  createOnly: ['topicId'],
  owner: partyOfParent('topics', 'topicId'),
  beforeDelete: refuseWhileChildren('Resolution', [
    ['resolution_options', 'resolution_id', 'options'],
    ['voting_sessions', 'resolution_id', 'voting sessions'],
    ['predefined_votes', 'resolution_id', 'predefined votes'],
  ]),
});

export const resolutionOptionResource = defineConferenceResource({
  name: 'ResolutionOption',
  path: '/api/resolution-options',
  table: 'resolution_options',
  read: ResolutionOptionRead,
  write: ResolutionOptionWrite,
  fields: { resolutionId: 'integer', label: 'string', position: 'integer' },
  sortable: ['resolutionId', 'position', 'label'],
  relations: { resolutionId: { table: 'resolutions', name: 'Resolution' } },
  createOnly: ['resolutionId'],
  owner: partyOfParent('resolutions', 'resolutionId'),
  derive: appendPosition('resolution_options', 'resolution_id'),
  beforeDelete: refuseWhileChildren('ResolutionOption', [
    ['conference_votes', 'resolution_option_id', 'votes'],
    ['predefined_votes', 'resolution_option_id', 'predefined votes'],
  ]),
});

export const votingSessionResource = defineConferenceResource({
  name: 'VotingSession',
  path: '/api/voting-sessions',
  table: 'voting_sessions',
  read: VotingSessionRead,
  write: VotingSessionWrite,
  fields: {
    conferenceId: 'integer',
    resolutionId: 'integer',
    status: 'string',
    openedAt: 'timestamp',
    closedAt: 'timestamp',
  },
  sortable: ['conferenceId', 'resolutionId', 'status', 'openedAt', 'closedAt'],
  relations: {
    conferenceId: { table: 'conferences', name: 'Conference' },
    resolutionId: { table: 'resolutions', name: 'Resolution' },
  },
  createOnly: ['conferenceId', 'resolutionId'],
  owner: partyOfParent('conferences', 'conferenceId'),
  // a new session is open unless said otherwise; opening and closing stamp their time unless the
  // client gives one, and reopening clears closedAt
  derive(values, { current, now }) {
    const derived: Record<string, unknown> = {};
    if (!current) {
      derived.status = values.status ?? 'open';
      if (values.opened_at === undefined) derived.opened_at = now;
    }
    const status = derived.status ?? values.status;
    if (values.closed_at === undefined && status !== undefined) {
      if (status === 'open') derived.closed_at = null;
      else if (current?.status !== 'closed') derived.closed_at = now;
    }
    return derived;
  },
  async validate(values, { trx, current }) {
    if (!current) {
      const resolution = await trx('resolutions')
        .join('topics', 'topics.id', 'resolutions.topic_id')
        .where('resolutions.id', values.resolution_id as number)
        .first('topics.conference_id');
      if (resolution && resolution.conference_id !== values.conference_id) {
        throw fieldError(
          'resolutionId',
          `Resolution ${String(values.resolution_id)} is not on the agenda of conference ${String(values.conference_id)}`,
        );
      }
    }
    const closed = values.closed_at === null ? null : new Date(values.closed_at as string | Date);
    if (values.status === 'open' && closed) {
      throw fieldError('closedAt', 'an open voting session has no closedAt; set status closed to close it');
    }
    if (values.status === 'closed' && !closed) {
      throw fieldError('closedAt', 'a closed voting session needs the time it closed');
    }
    const opened = new Date(values.opened_at as string | Date);
    if (closed && closed < opened) {
      throw fieldError('closedAt', `must not be before openedAt (${opened.toISOString()})`);
    }
    if (values.status === 'open' && current?.status !== 'open') {
      await assertNoOther(
        trx,
        'voting_sessions',
        { resolution_id: values.resolution_id, status: 'open' },
        current,
        `Resolution ${String(values.resolution_id)} already has an open voting session`,
      );
    }
  },
  beforeDelete: refuseWhileChildren('VotingSession', [['conference_votes', 'voting_session_id', 'votes']]),
});

export const mandateResource = defineConferenceResource({
  name: 'Mandate',
  path: '/api/mandates',
  table: 'mandates',
  read: MandateRead,
  write: MandateWrite,
  fields: {
    conferenceId: 'integer',
    grantorPartyId: 'integer',
    proxyPartyId: 'integer',
    validUntil: 'timestamp',
    instructions: 'string',
  },
  sortable: ['conferenceId', 'grantorPartyId', 'proxyPartyId', 'validUntil'],
  relations: {
    conferenceId: { table: 'conferences', name: 'Conference' },
    grantorPartyId: party('Party'),
    proxyPartyId: party('Party'),
  },
  createOnly: ['conferenceId', 'grantorPartyId'],
  owner: partyOfParent('conferences', 'conferenceId'),
  async validate(values, { trx, current }) {
    if (values.proxy_party_id === values.grantor_party_id) {
      throw fieldError('proxyPartyId', 'an owner cannot be their own proxy');
    }
    if (current) return;
    const grantor = await trx('parties').where({ id: values.grantor_party_id }).first('type');
    if (grantor?.type !== PartyType.User) {
      throw fieldError(
        'grantorPartyId',
        `Party ${String(values.grantor_party_id)} is not an owner (party type 7)`,
      );
    }
    const settings = await trx('conference_settings')
      .where({ party_id: values.party_id })
      .whereNull('deleted')
      .first('allow_proxy_voting');
    if (settings && !settings.allow_proxy_voting) {
      throw new AppError(
        'Conflict',
        `Proxy voting is turned off in the conference settings of party ${String(values.party_id)}`,
      );
    }
    await assertNoOther(
      trx,
      'mandates',
      { conference_id: values.conference_id, grantor_party_id: values.grantor_party_id },
      undefined,
      `Party ${String(values.grantor_party_id)} already has a mandate for conference ${String(values.conference_id)}`,
    );
  },
});

export const conferenceRoleResource = defineConferenceResource({
  name: 'ConferenceRole',
  path: '/api/conference-roles',
  table: 'conference_roles',
  read: ConferenceRoleRead,
  write: ConferenceRoleWrite,
  fields: { conferenceId: 'integer', holderPartyId: 'integer', role: 'string' },
  sortable: ['conferenceId', 'holderPartyId', 'role'],
  relations: {
    conferenceId: { table: 'conferences', name: 'Conference' },
    holderPartyId: party('Party'),
  },
  createOnly: ['conferenceId'],
  owner: partyOfParent('conferences', 'conferenceId'),
  async validate(values, { trx, current }) {
    await assertNoOther(
      trx,
      'conference_roles',
      { conference_id: values.conference_id, role: values.role },
      current,
      `Conference ${String(values.conference_id)} already has a ${String(values.role)}`,
    );
  },
});

export const conferenceVoteResource = defineConferenceResource({
  name: 'ConferenceVote',
  path: '/api/conference-votes',
  table: 'conference_votes',
  read: ConferenceVoteRead,
  write: ConferenceVoteWrite,
  fields: {
    votingSessionId: 'integer',
    resolutionOptionId: 'integer',
    voterPartyId: 'integer',
    weight: 'number',
  },
  sortable: ['votingSessionId', 'resolutionOptionId', 'voterPartyId', 'weight'],
  relations: {
    votingSessionId: { table: 'voting_sessions', name: 'VotingSession' },
    resolutionOptionId: { table: 'resolution_options', name: 'ResolutionOption' },
    voterPartyId: party('Party'),
  },
  createOnly: ['votingSessionId', 'voterPartyId'],
  owner: partyOfParent('voting_sessions', 'votingSessionId'),
  async validate(values, { trx, current }) {
    const session = await openSession(trx, values.voting_session_id);
    await assertOptionOf(trx, values.resolution_option_id, session.resolution_id, 'resolutionOptionId');
    if (current) return;
    await assertNoOther(
      trx,
      'conference_votes',
      { voting_session_id: values.voting_session_id, voter_party_id: values.voter_party_id },
      undefined,
      `Party ${String(values.voter_party_id)} already voted in voting session ${String(values.voting_session_id)}`,
    );
  },
  beforeDelete: async (current, { trx }) => {
    await openSession(trx, current.voting_session_id);
  },
});

export const predefinedVoteResource = defineConferenceResource({
  name: 'PredefinedVote',
  path: '/api/predefined-votes',
  table: 'predefined_votes',
  read: PredefinedVoteRead,
  write: PredefinedVoteWrite,
  fields: { resolutionId: 'integer', resolutionOptionId: 'integer', voterPartyId: 'integer' },
  sortable: ['resolutionId', 'resolutionOptionId', 'voterPartyId'],
  relations: {
    resolutionId: { table: 'resolutions', name: 'Resolution' },
    resolutionOptionId: { table: 'resolution_options', name: 'ResolutionOption' },
    voterPartyId: party('Party'),
  },
  createOnly: ['resolutionId', 'voterPartyId'],
  owner: partyOfParent('resolutions', 'resolutionId'),
  async validate(values, { trx, current }) {
    await assertOptionOf(trx, values.resolution_option_id, values.resolution_id, 'resolutionOptionId');
    if (current) return;
    await assertNoOther(
      trx,
      'predefined_votes',
      { resolution_id: values.resolution_id, voter_party_id: values.voter_party_id },
      undefined,
      `Party ${String(values.voter_party_id)} already has a predefined vote on resolution ${String(values.resolution_id)}`,
    );
  },
});

export const topicTemplateResource = defineConferenceResource({
  name: 'TopicTemplate',
  path: '/api/topic-templates',
  table: 'topic_templates',
  read: TopicTemplateRead,
  write: TopicTemplateWrite,
  fields: { title: 'string', description: 'string' },
  sortable: ['title'],
});

export const resolutionTemplateResource = defineConferenceResource({
  name: 'ResolutionTemplate',
  path: '/api/resolution-templates',
  table: 'resolution_templates',
  read: ResolutionTemplateRead,
  write: ResolutionTemplateWrite,
  fields: { title: 'string', text: 'string', majority: 'string' },
  sortable: ['title', 'majority'],
  beforeDelete: refuseWhileChildren('ResolutionTemplate', [
    ['resolution_option_templates', 'resolution_template_id', 'option templates'],
  ]),
});

export const resolutionOptionTemplateResource = defineConferenceResource({
  name: 'ResolutionOptionTemplate',
  path: '/api/resolution-option-templates',
  table: 'resolution_option_templates',
  read: ResolutionOptionTemplateRead,
  write: ResolutionOptionTemplateWrite,
  fields: { resolutionTemplateId: 'integer', label: 'string', position: 'integer' },
  sortable: ['resolutionTemplateId', 'position', 'label'],
  relations: { resolutionTemplateId: { table: 'resolution_templates', name: 'ResolutionTemplate' } },
  createOnly: ['resolutionTemplateId'],
  owner: partyOfParent('resolution_templates', 'resolutionTemplateId'),
  derive: appendPosition('resolution_option_templates', 'resolution_template_id'),
});

/** The conference family (docs/resources.md#conferences), in the order of its list there. */
export const conferenceResources: ResourceDefinition[] = [
  conferenceResource,
  settingsResource,
  topicResource,
  topicNoteResource,
  resolutionResource,
  resolutionOptionResource,
  votingSessionResource,
  mandateResource,
  conferenceVoteResource,
  predefinedVoteResource,
  conferenceRoleResource,
  topicTemplateResource,
  resolutionTemplateResource,
  resolutionOptionTemplateResource,
];
