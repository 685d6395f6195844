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
import { defineResource, type ResourceDefinition } from '../resource';

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
  columns: {
    propertyId: 'property_id',
    name: 'name',
    street: 'street',
    houseNumber: 'house_number',
    postalCode: 'postal_code',
    city: 'city',
    notes: 'notes',
  },
  relations: { propertyId: { table: 'properties', name: 'Property' } },
  collection: {
    fields: {
      id: { column: 'entrances.id', type: 'integer' },
      partyId: { column: 'entrances.party_id', type: 'integer' },
      propertyId: { column: 'entrances.property_id', type: 'integer' },
      name: { column: 'entrances.name', type: 'string' },
      street: { column: 'entrances.street', type: 'string' },
      postalCode: { column: 'entrances.postal_code', type: 'string' },
      city: { column: 'entrances.city', type: 'string' },
      created: { column: 'entrances.created', type: 'timestamp' },
      lastModified: { column: 'entrances.last_modified', type: 'timestamp' },
    },
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
  columns: {
    propertyId: 'property_id',
    entranceId: 'entrance_id',
    number: 'number',
    floor: 'floor',
    unitType: 'unit_type',
    livingArea: 'living_area',
    rooms: 'rooms',
    notes: 'notes',
  },
  relations: {
    propertyId: { table: 'properties', name: 'Property' },
    entranceId: { table: 'entrances', name: 'Entrance' },
  },
  collection: {
    fields: {
      id: { column: 'units.id', type: 'integer' },
      partyId: { column: 'units.party_id', type: 'integer' },
      propertyId: { column: 'units.property_id', type: 'integer' },
      entranceId: { column: 'units.entrance_id', type: 'integer' },
      number: { column: 'units.number', type: 'string' },
      floor: { column: 'units.floor', type: 'integer' },
      unitType: { column: 'units.unit_type', type: 'string' },
      livingArea: { column: 'units.living_area', type: 'number' },
      rooms: { column: 'units.rooms', type: 'number' },
      created: { column: 'units.created', type: 'timestamp' },
      lastModified: { column: 'units.last_modified', type: 'timestamp' },
    },
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
  columns: {
    unitId: 'unit_id',
    contractPartyId: 'contract_party_id',
    contractType: 'contract_type',
    startDate: 'start_date',
    endDate: 'end_date',
    monthlyRent: 'monthly_rent',
    currency: 'currency',
    notes: 'notes',
  },
  relations: {
    unitId: { table: 'units', name: 'Unit' },
    contractPartyId: { table: 'parties', name: 'Party', partyColumn: 'id' },
  },
  collection: {
    fields: {
      id: { column: 'unit_contracts.id', type: 'integer' },
      partyId: { column: 'unit_contracts.party_id', type: 'integer' },
      unitId: { column: 'unit_contracts.unit_id', type: 'integer' },
      contractPartyId: { column: 'unit_contracts.contract_party_id', type: 'integer' },
      contractType: { column: 'unit_contracts.contract_type', type: 'string' },
      startDate: { column: 'unit_contracts.start_date', type: 'date' },
      endDate: { column: 'unit_contracts.end_date', type: 'date' },
      monthlyRent: { column: 'unit_contracts.monthly_rent', type: 'number' },
      currency: { column: 'unit_contracts.currency', type: 'string' },
      created: { column: 'unit_contracts.created', type: 'timestamp' },
      lastModified: { column: 'unit_contracts.last_modified', type: 'timestamp' },
    },
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
