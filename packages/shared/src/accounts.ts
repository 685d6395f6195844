import { z } from 'zod';
import { IdList, Page } from './pagination';

const timestamp = z.iso.datetime({ offset: true });
const id = z.number().int().min(1).max(2147483647);

export const AccountRead = z
  .object({
    id: z.number().int(),
    partyId: z.number().int(),
    groupId: z.number().int(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    mustChangePassword: z.boolean(),
    multiFactorEnabled: z.boolean(),
    created: timestamp,
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
  })
  .meta({ id: 'AccountRead' });
export type AccountRead = z.infer<typeof AccountRead>;

export const PaginatedListOfAccountRead = Page(AccountRead).meta({ id: 'PaginatedListOfAccountRead' });

/** Longest first or last name an account may have. */
export const ACCOUNT_NAME_MAX_LENGTH = 100;

const accountEmail = z.string().trim().max(254).pipe(z.email()).meta({
  format: 'email',
  description: 'Unique among live accounts, compared case-insensitively. Surrounding spaces are removed.',
});
const accountName = z
  .string()
  .trim()
  .min(1, 'Must not be empty; null clears it')
  .max(ACCOUNT_NAME_MAX_LENGTH);

/** Body of POST /api/accounts. */
export const AccountWrite = z
  .strictObject({
    partyId: id.meta({ description: 'A party within the caller’s scope.' }),
    groupId: id.meta({ description: 'A live account group of that party.' }),
    email: accountEmail,
    firstName: accountName.nullable().optional(),
    lastName: accountName.nullable().optional(),
    password: z
      .string()
      .max(200)
      .optional()
      .meta({
        description:
          'Initial password; the account must change it at its first login (its token then only has the ' +
          'change-password scope). Without one, the account sets its password through password recovery.',
      }),
  })
  .meta({ id: 'AccountWrite' });
export type AccountWrite = z.infer<typeof AccountWrite>;

const accountPatchShape = z.strictObject({
  email: accountEmail.optional(),
  firstName: accountName.nullable().optional(),
  lastName: accountName.nullable().optional(),
  groupId: id
    .optional()
    .meta({ description: 'A live account group of the account’s party. A User cannot change it.' }),
});

/** A JSON merge patch of an account: absent leaves a field, null clears `firstName`/`lastName`. */
export const AccountPatch = accountPatchShape
  .refine((patch) => Object.keys(patch).length > 0, {
    message: 'Must change at least one field',
    // an unknown or invalid field is the problem to report, not the emptiness it leaves behind
    when: (payload) => payload.issues.length === 0,
  })
  .meta({ id: 'AccountPatch' });
export type AccountPatch = z.infer<typeof AccountPatch>;

/** Bulk update body (BulkUpdateDtoOfInt32 of accounts): one patch for many ids. */
export const AccountBulkUpdate = z
  .strictObject({ ids: IdList.shape.ids, patch: AccountPatch })
  .meta({ id: 'BulkUpdateDtoOfInt32OfAccount' });
export type AccountBulkUpdate = z.infer<typeof AccountBulkUpdate>;

/**
 * Body and answer of `/api/accounts/{id}/skip-multi-factor-authentication`: whether the account may
 * skip its second factor by logging in with `skipMultiFactorAuthentication: true` (docs/decisions.md#multi-factor-authentication).
 * Only an Admin reads or sets it; every change is audited.
 */
export const AccountMfaSkip = z
  .strictObject({
    allowed: z.boolean().meta({
      description:
        'true: a login with `skipMultiFactorAuthentication: true` answers tokens without asking for the ' +
        'second factor; false (the default): the request field is ignored.',
    }),
  })
  .meta({ id: 'AccountMfaSkip' });
export type AccountMfaSkip = z.infer<typeof AccountMfaSkip>;

/** Body of PUT /api/accounts/{id}/password. */
export const ChangePasswordRequest = z
  .strictObject({
    currentPassword: z.string().min(1).max(200),
    newPassword: z.string().min(1).max(200).meta({
      description:
        'At least 10 characters mixing three of: lower case, upper case, digits, symbols; not the current one.',
    }),
  })
  .meta({ id: 'ChangePasswordRequest' });
export type ChangePasswordRequest = z.infer<typeof ChangePasswordRequest>;

/** The empty success body of operations that answer nothing but 200. */
export const Void = z.object({}).meta({ id: 'Void' });
export type Void = z.infer<typeof Void>;

/**
 * A party (organisation or person owning accounts). Read through an account for now; the Party
 * resource of a later issue takes it over.
 */
export const PartyRead = z
  .object({
    id: z.number().int(),
    type: z
      .number()
      .int()
      .meta({
        description:
          'Party type (account role): 1 Admin, 2 Property Management Company, 3 Pool Manager, 5 Contractor, ' +
          '7 User, 13 Insurance Broker, 14 Insurer.',
      }),
    name: z.string(),
    managedByPartyId: z.number().int().nullable(),
    conferenceEnabled: z.boolean(),
    created: timestamp,
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
  })
  .meta({ id: 'PartyRead' });
export type PartyRead = z.infer<typeof PartyRead>;
