import { PropertyRead, PropertyWrite } from '@platform/shared';
import { withMeta } from '../present';
import { defineResource, writeColumns, tableFields } from '../resource';

/** Property: a building (Gen1 "object"; docs/gen1-to-gen2.md#semantic-traps). */
export const propertyResource = defineResource({
  name: 'Property',
  path: '/api/properties',
  table: 'properties',
  permission: 'Property',
  read: PropertyRead,
  write: PropertyWrite,
  columns: writeColumns(PropertyWrite),
  collection: {
    fields: tableFields('properties', {
      id: 'integer',
      partyId: 'integer',
      name: 'string',
      street: 'string',
      postalCode: 'string',
      city: 'string',
      country: 'string',
      propertyType: 'string',
      yearBuilt: 'integer',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'name', 'city', 'postalCode', 'street', 'yearBuilt', 'created', 'lastModified'],
    tieBreaker: 'properties.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      name: row.name as string,
      street: row.street as string,
      houseNumber: row.house_number as string | null,
      postalCode: row.postal_code as string,
      city: row.city as string,
      country: row.country as string,
      propertyType: row.property_type as PropertyRead['propertyType'],
      yearBuilt: row.year_built as number | null,
      notes: row.notes as string | null,
    }),
});
