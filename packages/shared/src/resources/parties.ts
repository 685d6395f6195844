import { z } from 'zod';
import { CONTACT_DETAIL_TYPES, CONTACT_LABEL_MAX_LENGTH, contactValueProblem } from '../contact-details';
import { ALL_PARTY_TYPES, PartyType } from '../enums';
import { EntityMeta, Id } from './common';

// PartyRead is defined once, in ../accounts (GET /api/accounts/{id}/party answers it too); the Party
// resource reuses it, since a second schema with the same OpenAPI id would break the document.

/**
 * Party types a Property Management Company may create and manage: everything but Admin and
 * another Property Management Company. Admin and PMC parties are never managed by anyone.
 */
export const MANAGED_PARTY_TYPES = [
  PartyType.PoolManager,
  PartyType.Contractor,
  PartyType.User,
  PartyType.InsuranceBroker,
  PartyType.Insurer,
] as const;

const partyType = z.literal(ALL_PARTY_TYPES as [PartyType, ...PartyType[]]).meta({
  description:
    'Party type (account role): 1 Admin, 2 Property Management Company, 3 Pool Manager, 5 Contractor, ' +
    '7 User, 13 Insurance Broker, 14 Insurer. Set at creation; it never changes.',
});

/** Body of POST /api/parties; its merge patch leaves out `type`. */
export const PartyWrite = z
  .strictObject({
    type: partyType,
    name: z.string().trim().min(1).max(200),
    managedByPartyId: Id.nullable()
      .optional()
      .meta({
        description:
          'The Property Management Company managing this party (types 3, 5, 7, 13, 14 only). A Property ' +
          'Management Company always creates parties it manages itself; only an Admin moves a party.',
      }),
    conferenceEnabled: z
      .boolean()
      .optional()
      .meta({
        description:
          'The conference feature. An Admin sets it on any party; a Property Management Company that has ' +
          'the feature sets it on the parties it manages.',
      }),
  })
  .meta({ id: 'PartyWrite' });
export type PartyWrite = z.infer<typeof PartyWrite>;

/** The kinds of contact detail a party holds: an account's kinds plus a postal address. */
export const PARTY_CONTACT_DETAIL_TYPES = [...CONTACT_DETAIL_TYPES, 'address'] as const;
export type PartyContactDetailType = (typeof PARTY_CONTACT_DETAIL_TYPES)[number];

/** Longest postal address: several lines of street, district, postal code and city. */
export const CONTACT_ADDRESS_MAX_LENGTH = 500;
/** Live contact details one party may hold. */
export const MAX_CONTACT_DETAILS_PER_PARTY = 100;

/** Why `value` is not a valid party contact detail of `type`, or undefined when it is. */
export function partyContactValueProblem(type: PartyContactDetailType, value: string): string | undefined {
  if (type !== 'address') return contactValueProblem(type, value);
  return value.length > CONTACT_ADDRESS_MAX_LENGTH
    ? `An address has at most ${CONTACT_ADDRESS_MAX_LENGTH} characters`
    : undefined;
}

export const ContactDetailsRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    type: z.enum(PARTY_CONTACT_DETAIL_TYPES),
    value: z.string(),
    label: z.string().nullable(),
    isPrimary: z.boolean(),
  })
  .meta({ id: 'ContactDetailsRead' });
export type ContactDetailsRead = z.infer<typeof ContactDetailsRead>;

/** Body of POST /api/contact-details; the value is checked against the type on create and patch. */
export const ContactDetailsWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    type: z.enum(PARTY_CONTACT_DETAIL_TYPES),
    value: z
      .string()
      .trim()
      .min(1)
      .max(2048)
      .meta({
        description:
          'Checked against `type`: an email address, a phone number (digits, spaces, ( ) / - and a leading +), ' +
          'an absolute http(s) URL, or a postal address (free text, line breaks allowed, at most 500 ' +
          'characters). Surrounding spaces are removed.',
      }),
    label: z.string().trim().min(1).max(CONTACT_LABEL_MAX_LENGTH).nullable().optional(),
    isPrimary: z.boolean().optional().meta({
      description: 'Making a detail primary makes the party’s other detail of its type non-primary.',
    }),
  })
  .meta({ id: 'ContactDetailsWrite' });
export type ContactDetailsWrite = z.infer<typeof ContactDetailsWrite>;
