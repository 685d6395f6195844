import {
  ContactDetailsRead,
  ContactDetailsWrite,
  MANAGED_PARTY_TYPES,
  MAX_CONTACT_DETAILS_PER_PARTY,
  PartyRead,
  PartyType,
  PartyWrite,
  partyContactValueProblem,
  type PartyContactDetailType,
} from '@platform/shared';
import { newPartyPlacement, type Knex } from '@platform/db';
import { AppError, fieldError } from '../../http/errors';
import { withMeta } from '../present';
import { defineResource, type ResourceDefinition, type Row, snakeColumns, tableFields } from '../resource';

const isManagedType = (type: unknown) => (MANAGED_PARTY_TYPES as readonly unknown[]).includes(type);

/** A party row as its read shape (the PartyRead of GET /api/accounts/{id}/party). */
function presentParty(row: Row): PartyRead {
  return withMeta(row, {
    type: row.type as number,
    name: row.name as string,
    managedByPartyId: row.managed_by_party_id as number | null,
    conferenceEnabled: row.conference_enabled as boolean,
  });
}

/** A contact_details row as its read shape. */
function presentContactDetails(row: Row): ContactDetailsRead {
  return withMeta(row, {
    partyId: row.party_id as number,
    type: row.type as PartyContactDetailType,
    value: row.value as string,
    label: row.label as string | null,
    isPrimary: row.is_primary as boolean,
  });
}

/**
 * A live party row, key-share locked until commit: a concurrent delete of that party (which locks
 * it for update) then either waits for this write or makes this read find nothing.
 */
function lockLiveParty(trx: Knex.Transaction, id: unknown): Promise<{ type: number } | undefined> {
  return trx('parties').where({ id }).whereNull('deleted').forKeyShare().first('type');
}

/** Party: an organisation or person owning accounts (docs/api.md#party-types; Gen1 "companies"). */
const partyResource = defineResource({
  name: 'Party',
  path: '/api/parties',
  table: 'parties',
  permission: 'Party',
  read: PartyRead,
  write: PartyWrite,
  columns: snakeColumns(['type', 'name', 'managedByPartyId', 'conferenceEnabled']),
  relations: { managedByPartyId: { table: 'parties', name: 'Party', partyColumn: 'id' } },
  // a party's type decides what its accounts may do; changing it would silently re-grant rights
  createOnly: ['type'],
  // a party is in scope of itself and of the party managing it
  partyColumn: 'id',
  collection: {
    fields: tableFields('parties', {
      id: 'integer',
      type: 'integer',
      name: 'string',
      managedByPartyId: 'integer',
      conferenceEnabled: 'boolean',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'type', 'name', 'managedByPartyId', 'created', 'lastModified'],
    tieBreaker: 'parties.id',
  },
  present: presentParty,
  owner: async (body, { principal }) => {
    // an Admin places a new party where it says; anyone else creates parties it manages itself
    if (principal.partyType === PartyType.Admin) return {};
    if (body.managedByPartyId !== undefined && body.managedByPartyId !== principal.partyId) {
      throw new AppError(
        'Forbidden',
        'A Property Management Company creates parties it manages itself; managedByPartyId must be its own party',
      );
    }
    return { managed_by_party_id: principal.partyId };
  },
  // a new party's place in the tenant directory (its manager's bucket, or its own); a change of
  // manager keeps it: moving a party's rows to another bucket is a tenant move (docs/scaling.md)
  derive: async (values, { trx, current }) =>
    current ? {} : newPartyPlacement(trx, values.managed_by_party_id as number | null | undefined),
  validate: async (values, { trx, principal, current }) => {
    const isAdmin = principal.partyType === PartyType.Admin;
    if (!current && !isAdmin && !isManagedType(values.type)) {
      throw new AppError(
        'Forbidden',
        `A Property Management Company creates parties of types ${MANAGED_PARTY_TYPES.join(', ')} only`,
      );
    }

    const manager = (values.managed_by_party_id ?? null) as number | null;
    const movesManager = current !== undefined && manager !== current.managed_by_party_id;
    if (movesManager && !isAdmin) {
      throw new AppError(
        'Forbidden',
        'Only an Admin moves a party to another managing party (managedByPartyId)',
      );
    }
    if (manager !== null && (current === undefined || movesManager)) {
      if (!isManagedType(values.type)) {
        throw fieldError(
          'managedByPartyId',
          'An Admin or Property Management Company party is never managed',
        );
      }
      const managing = await lockLiveParty(trx, manager);
      if (managing?.type !== PartyType.PropertyManagementCompany) {
        throw fieldError('managedByPartyId', `Party ${manager} is not a live Property Management Company`);
      }
    }

    const enabled = (values.conference_enabled ?? false) as boolean;
    const changesFeature = current ? enabled !== current.conference_enabled : enabled;
    if (changesFeature && !isAdmin) {
      // the feature is granted by the platform; a PMC holding it may pass it on to its own parties
      const caller = await trx('parties').where({ id: principal.partyId }).first('conference_enabled');
      if (!caller?.conference_enabled || manager !== principal.partyId) {
        throw new AppError(
          'Forbidden',
          'conferenceEnabled is set by an Admin, or by a Property Management Company that has the ' +
            'conference feature for the parties it manages',
        );
      }
    }
  },
  beforeDelete: async (current, { trx, principal, now, capture }) => {
    const id = current.id;
    if (id === principal.partyId) {
      throw new AppError('Conflict', 'A party cannot delete itself; another Admin or its managing party can');
    }
    const [accounts] = await trx('accounts')
      .where({ party_id: id })
      .whereNull('deleted')
      .count<{ count: number }[]>({ count: '*' });
    if (Number(accounts?.count) > 0) {
      throw new AppError(
        'Conflict',
        `Party ${id} still has ${accounts!.count} live account(s); delete them first`,
      );
    }
    const [managed] = await trx('parties')
      .where({ managed_by_party_id: id })
      .whereNull('deleted')
      .count<{ count: number }[]>({ count: '*' });
    if (Number(managed?.count) > 0) {
      throw new AppError(
        'Conflict',
        `Party ${id} still manages ${managed!.count} live party(ies); delete or move them first`,
      );
    }
    // the party's contact details go with it, each a ContactDetails deletion of its own
    const details = (await trx('contact_details')
      .where({ party_id: id })
      .whereNull('deleted')
      .update({ deleted: now, last_modified: now })
      .returning('*')) as Row[];
    for (const detail of details.sort((a, b) => a.id - b.id)) {
      await capture('ContactDetails', 3, detail.id, presentContactDetails(detail));
    }
  },
});

/** ContactDetails: contact records of a party (Gen1 "companycontact"), not of an account. */
const contactDetailsResource = defineResource({
  name: 'ContactDetails',
  path: '/api/contact-details',
  table: 'contact_details',
  permission: 'ContactDetails',
  read: ContactDetailsRead,
  write: ContactDetailsWrite,
  columns: { type: 'type', value: 'value', label: 'label', isPrimary: 'is_primary' },
  collection: {
    fields: tableFields('contact_details', {
      id: 'integer',
      partyId: 'integer',
      type: 'string',
      value: 'string',
      label: 'string',
      isPrimary: 'boolean',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'partyId', 'type', 'value', 'label', 'created', 'lastModified'],
    tieBreaker: 'contact_details.id',
  },
  present: presentContactDetails,
  validate: async (values, { trx, now, capture, current }) => {
    const type = values.type as PartyContactDetailType;
    const value = values.value as string;
    if (!current || type !== current.type || value !== current.value) {
      const problem = partyContactValueProblem(type, value);
      // a patch of the type alone makes the stored value wrong: name the field it changed
      if (problem && current && value === current.value) {
        throw fieldError('type', `The detail's value does not suit it: ${problem}`);
      }
      if (problem) throw fieldError('value', problem);
    }
    const partyId = values.party_id as number;
    // serialises the detail writes of one party, so its count and its one primary per type hold
    await trx.raw(`select pg_advisory_xact_lock(hashtext('contact_details'), ?)`, [partyId]);
    if (!current) {
      if (!(await lockLiveParty(trx, partyId)))
        throw fieldError('partyId', `Party ${partyId} does not exist`);
      const [counted] = await trx('contact_details')
        .where({ party_id: partyId })
        .whereNull('deleted')
        .count<{ count: number }[]>({ count: '*' });
      if (Number(counted?.count) >= MAX_CONTACT_DETAILS_PER_PARTY) {
        throw fieldError('partyId', `A party holds at most ${MAX_CONTACT_DETAILS_PER_PARTY} contact details`);
      }
    }
    if (values.is_primary === true) {
      // the previous primary of the type loses its flag: a change of its own, captured as such
      const demoted = (await trx('contact_details')
        .where({ party_id: partyId, type, is_primary: true })
        .whereNot('id', current?.id ?? 0)
        .whereNull('deleted')
        .update({ is_primary: false, last_modified: now })
        .returning('*')) as Row[];
      for (const row of demoted) await capture('ContactDetails', 2, row.id, presentContactDetails(row));
    }
  },
});

export const partyResources: ResourceDefinition[] = [partyResource, contactDetailsResource];
