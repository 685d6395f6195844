import { PropertyRead, PropertyWrite } from '@platform/shared';
import { withMeta } from '../present';
import { defineResource } from '../resource';

/** Property: a building (Gen1 "object"; docs/gen1-to-gen2.md#semantic-traps). */
export const propertyResource = defineResource({
  name: 'Property',
  path: '/api/properties',
  table: 'properties',
  permission: 'Property',
  read: PropertyRead,
  write: PropertyWrite,
  columns: {
    name: 'name',
    street: 'street',
    houseNumber: 'house_number',
    postalCode: 'postal_code',
    city: 'city',
    country: 'country',
    propertyType: 'property_type',
    yearBuilt: 'year_built',
    notes: 'notes',
  },
  collection: {
    fields: {
      id: { column: 'properties.id', type: 'integer' },
      partyId: { column: 'properties.party_id', type: 'integer' },
      name: { column: 'properties.name', type: 'string' },
      street: { column: 'properties.street', type: 'string' },
      postalCode: { column: 'properties.postal_code', type: 'string' },
      city: { column: 'properties.city', type: 'string' },
      country: { column: 'properties.country', type: 'string' },
      propertyType: { column: 'properties.property_type', type: 'string' },
      yearBuilt: { column: 'properties.year_built', type: 'integer' },
      created: { column: 'properties.created', type: 'timestamp' },
      lastModified: { column: 'properties.last_modified', type: 'timestamp' },
    },
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
