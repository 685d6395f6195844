import {
  EntranceRead,
  EntranceWrite,
  UnitContractRead,
  UnitContractWrite,
  UnitRead,
  UnitWrite,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import { AppError, fieldError } from '../../http/errors';
import { decimal, withMeta, isoDate } from '../present';
import { defineResource, type ResourceDefinition, writeColumns, tableFields } from '../resource';

/**
 * A 409 when another live row of `table` in the same property already uses `value` in `column`
 * (case-insensitively). The unique index closes the race between two writers; this check only
 * lets the answer name the field.
 */
async function assertUniqueInProperty(
  trx: Knex.Transaction,
  table: string,
  column: string,
  values: Record<string, unknown>,
  what: string,
): Promise<void> {
  const clash = await trx(table)
    .where({ property_id: values.property_id })
    .whereRaw(`lower(${column}) = lower(?)`, [values[column] as string])
    .whereNull('deleted')
    .modify((query) => {
      if (values.id !== undefined) query.whereNot({ id: values.id });
    })
    .first('id');
  if (clash) {
    throw new AppError(
      'Conflict',
      `${what} "${String(values[column])}" already exists in property ${String(values.property_id)}`,
    );
  }
}

/** Entrance: a staircase or house entrance of a property, which may carry its own address. */
export const entranceResource = defineResource({
  name: 'Entrance',
  path: '/api/entrances',
  table: 'entrances',
  permission: 'Entrance',
  read: EntranceRead,
  write: EntranceWrite,
  columns: writeColumns(EntranceWrite),
  relations: { propertyId: { table: 'properties', name: 'Property' } },
  collection: {
    fields: tableFields('entrances', {
      id: 'integer',
      partyId: 'integer',
      propertyId: 'integer',
      name: 'string',
      street: 'string',
      postalCode: 'string',
      city: 'string',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'propertyId', 'name', 'street', 'postalCode', 'city', 'created', 'lastModified'],
    tieBreaker: 'entrances.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      propertyId: row.property_id as number,
      name: row.name as string,
      street: row.street as string | null,
      houseNumber: row.house_number as string | null,
      postalCode: row.postal_code as string | null,
      city: row.city as string | null,
      notes: row.notes as string | null,
    }),
  async validate(values, { trx }) {
    await assertUniqueInProperty(trx, 'entrances', 'name', values, 'Entrance');
    // an entrance cannot move away from its units: they would sit in one property and an entrance of another
    if (values.id === undefined) return;
    const stranded = await trx('units')
      .where({ entrance_id: values.id })
      .whereNot({ property_id: values.property_id })
      .whereNull('deleted')
      .first('id');
    if (stranded) {
      throw fieldError(
        'propertyId',
        `Entrance ${String(values.id)} still has units in another property (unit ${String(stranded.id)}); move them first`,
      );
    }
  },
});

/** Unit: an apartment, shop, parking space or storage room of a property, optionally behind an entrance. */
export const unitResource = defineResource({
  name: 'Unit',
  path: '/api/units',
  table: 'units',
  permission: 'Unit',
  read: UnitRead,
  write: UnitWrite,
  columns: writeColumns(UnitWrite),
  relations: {
    propertyId: { table: 'properties', name: 'Property' },
    entranceId: { table: 'entrances', name: 'Entrance' },
  },
  collection: {
    fields: tableFields('units', {
      id: 'integer',
      partyId: 'integer',
      propertyId: 'integer',
      entranceId: 'integer',
      number: 'string',
      floor: 'integer',
      unitType: 'string',
      livingArea: 'number',
      rooms: 'number',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: [
      'id',
      'propertyId',
      'entranceId',
      'number',
      'floor',
      'unitType',
      'livingArea',
      'rooms',
      'created',
      'lastModified',
    ],
    tieBreaker: 'units.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      propertyId: row.property_id as number,
      entranceId: row.entrance_id as number | null,
      number: row.number as string,
      floor: row.floor as number | null,
      unitType: row.unit_type as UnitRead['unitType'],
      livingArea: decimal(row.living_area),
      rooms: decimal(row.rooms),
      notes: row.notes as string | null,
    }),
  async validate(values, { trx }) {
    await assertUniqueInProperty(trx, 'units', 'number', values, 'Unit');
    if (values.entrance_id === null || values.entrance_id === undefined) return;
    // deleted or not: liveness is the relation check's job when entranceId is written; this
    // check also runs when only propertyId moves, against the entrance the unit already has
    const entrance = await trx('entrances').where({ id: values.entrance_id }).first('property_id');
    if (entrance && entrance.property_id !== values.property_id) {
      throw fieldError(
        'entranceId',
        `Entrance ${String(values.entrance_id)} belongs to property ${String(entrance.property_id)}, not to property ${String(values.property_id)}`,
      );
    }
  },
});

/** UnitContract: a tenancy, ownership or commercial lease of a unit, with its party and dates. */
export const unitContractResource = defineResource({
  name: 'UnitContract',
  path: '/api/unit-contracts',
  table: 'unit_contracts',
  permission: 'UnitContract',
  read: UnitContractRead,
  write: UnitContractWrite,
  columns: writeColumns(UnitContractWrite),
  relations: {
    unitId: { table: 'units', name: 'Unit' },
    contractPartyId: { table: 'parties', name: 'Party', partyColumn: 'id' },
  },
  collection: {
    fields: tableFields('unit_contracts', {
      id: 'integer',
      partyId: 'integer',
      unitId: 'integer',
      contractPartyId: 'integer',
      contractType: 'string',
      startDate: 'date',
      endDate: 'date',
      monthlyRent: 'number',
      currency: 'string',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: [
      'id',
      'unitId',
      'contractPartyId',
      'contractType',
      'startDate',
      'endDate',
      'monthlyRent',
      'created',
      'lastModified',
    ],
    tieBreaker: 'unit_contracts.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      unitId: row.unit_id as number,
      contractPartyId: row.contract_party_id as number | null,
      contractType: row.contract_type as UnitContractRead['contractType'],
      startDate: isoDate(row.start_date)!,
      endDate: isoDate(row.end_date),
      monthlyRent: decimal(row.monthly_rent),
      currency: row.currency as string,
      notes: row.notes as string | null,
    }),
  async validate(values) {
    // checked on the merged row, so a patch of either date alone is held to the other's stored value
    const start = isoDate(values.start_date);
    const end = isoDate(values.end_date);
    if (start !== null && end !== null && end < start) {
      throw fieldError('endDate', `must be on or after the start date ${start}`);
    }
  },
});

export const realEstateResources: ResourceDefinition[] = [
  entranceResource,
  unitResource,
  unitContractResource,
];
