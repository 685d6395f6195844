import { z } from 'zod';
import { EntityMeta, Id, OptionalText, Text } from './common';

export const UNIT_TYPES = ['apartment', 'commercial', 'parking', 'storage', 'other'] as const;
export const CONTRACT_TYPES = ['tenancy', 'ownership', 'commercial-lease'] as const;

/** A calendar date, `YYYY-MM-DD`, as every `date` field is written and read. */
export const CalendarDate = z.iso.date().meta({ description: 'A calendar date, YYYY-MM-DD' });

// the runtime's ICU list (Node and every current browser), so a made-up "XYZ" is refused too
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 currency code such as EUR. */
export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code such as EUR')
  .refine((code) => CURRENCIES.has(code), 'is not an ISO 4217 currency code')
  .meta({ description: 'ISO 4217', example: 'EUR' });

/** A non-negative decimal with at most `scale` fraction digits below `max`, as a `numeric` column holds. */
const Decimal = (max: number, scale: 1 | 2) =>
  z
    .number()
    .min(0)
    .max(max)
    .multipleOf(scale === 1 ? 0.1 : 0.01, `must have at most ${scale} decimal places`);

// ---- Entrance: a staircase or house entrance of a property -------------------------------------

export const EntranceRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    propertyId: z.number().int(),
    name: z.string(),
    street: z.string().nullable(),
    houseNumber: z.string().nullable(),
    postalCode: z.string().nullable(),
    city: z.string().nullable(),
    notes: z.string().nullable(),
  })
  .meta({ id: 'EntranceRead' });
export type EntranceRead = z.infer<typeof EntranceRead>;

export const EntranceWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    propertyId: Id.meta({ description: 'The property the entrance belongs to.' }),
    name: Text(100).meta({ description: 'Unique within the property, e.g. "Aufgang A" or "Haus 2".' }),
    street: OptionalText(200).meta({ description: 'Only when it differs from the property’s address.' }),
    houseNumber: OptionalText(20),
    postalCode: OptionalText(20),
    city: OptionalText(100),
    notes: OptionalText(4000),
  })
  .meta({ id: 'EntranceWrite' });
export type EntranceWrite = z.infer<typeof EntranceWrite>;

// ---- Unit: an apartment, shop, parking space or storage room of a property ----------------------

export const UnitRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    propertyId: z.number().int(),
    entranceId: z.number().int().nullable(),
    number: z.string(),
    floor: z.number().int().nullable(),
    unitType: z.enum(UNIT_TYPES),
    livingArea: z.number().nullable().meta({ description: 'Square metres' }),
    rooms: z.number().nullable(),
    notes: z.string().nullable(),
  })
  .meta({ id: 'UnitRead' });
export type UnitRead = z.infer<typeof UnitRead>;

export const UnitWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    propertyId: Id.meta({ description: 'The property the unit belongs to.' }),
    entranceId: Id.nullable()
      .optional()
      .meta({ description: 'An entrance of the same property; null when the unit has none.' }),
    number: Text(50).meta({ description: 'Unique within the property, e.g. "WE 12".' }),
    floor: z
      .number()
      .int()
      .min(-20)
      .max(200)
      .nullable()
      .optional()
      .meta({ description: '0 is the ground floor; basements are negative.' }),
    unitType: z.enum(UNIT_TYPES).optional().meta({ description: 'Default apartment.' }),
    livingArea: Decimal(999999.99, 2).nullable().optional().meta({ description: 'Square metres' }),
    rooms: Decimal(999.9, 1).nullable().optional().meta({ description: 'Half rooms count as .5' }),
    notes: OptionalText(4000),
  })
  .meta({ id: 'UnitWrite' });
export type UnitWrite = z.infer<typeof UnitWrite>;

// ---- UnitContract: who rents or owns a unit, from when to when ----------------------------------

export const UnitContractRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    unitId: z.number().int(),
    contractPartyId: z.number().int().nullable(),
    contractType: z.enum(CONTRACT_TYPES),
    startDate: CalendarDate,
    endDate: CalendarDate.nullable(),
    monthlyRent: z.number().nullable(),
    currency: z.string(),
    notes: z.string().nullable(),
  })
  .meta({ id: 'UnitContractRead' });
export type UnitContractRead = z.infer<typeof UnitContractRead>;

export const UnitContractWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    unitId: Id.meta({ description: 'The unit the contract is about.' }),
    contractPartyId: Id.nullable()
      .optional()
      .meta({ description: 'The tenant’s or owner’s party, within the caller’s scope.' }),
    contractType: z.enum(CONTRACT_TYPES),
    startDate: CalendarDate,
    endDate: CalendarDate.nullable()
      .optional()
      .meta({ description: 'On or after startDate; null while the contract runs indefinitely.' }),
    monthlyRent: Decimal(9999999999.99, 2).nullable().optional(),
    currency: CurrencyCode.optional().meta({ description: 'ISO 4217; default EUR.' }),
    notes: OptionalText(4000),
  })
  .meta({ id: 'UnitContractWrite' });
export type UnitContractWrite = z.infer<typeof UnitContractWrite>;
