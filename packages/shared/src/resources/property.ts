import { z } from 'zod';
import { EntityMeta, Id, OptionalText, Text } from './common';

export const PROPERTY_TYPES = ['residential', 'commercial', 'mixed'] as const;

export const PropertyRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    name: z.string(),
    street: z.string(),
    houseNumber: z.string().nullable(),
    postalCode: z.string(),
    city: z.string(),
    country: z.string().meta({ description: 'ISO 3166-1 alpha-2' }),
    propertyType: z.enum(PROPERTY_TYPES),
    yearBuilt: z.number().int().nullable(),
    notes: z.string().nullable(),
  })
  .meta({ id: 'PropertyRead' });
export type PropertyRead = z.infer<typeof PropertyRead>;

export const PropertyWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    name: Text(200),
    street: Text(200),
    houseNumber: OptionalText(20),
    postalCode: Text(20),
    city: Text(100),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as DE')
      .optional(),
    propertyType: z.enum(PROPERTY_TYPES).optional(),
    yearBuilt: z.number().int().min(1000).max(2100).nullable().optional(),
    notes: OptionalText(4000),
  })
  .meta({ id: 'PropertyWrite' });
export type PropertyWrite = z.infer<typeof PropertyWrite>;
