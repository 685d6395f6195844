import { z } from 'zod';
import { IdList, Page } from './pagination';

const timestamp = z.iso.datetime({ offset: true });

/** The kinds of contact detail an account can hold. */
export const CONTACT_DETAIL_TYPES = ['email', 'phone', 'mobile', 'fax', 'website'] as const;
export type ContactDetailType = (typeof CONTACT_DETAIL_TYPES)[number];

/** Longest value per type: RFC 5321 for an address, E.164 plus formatting for numbers. */
export const CONTACT_VALUE_MAX_LENGTH: Record<ContactDetailType, number> = {
  email: 254,
  phone: 40,
  mobile: 40,
  fax: 40,
  website: 2048,
};
export const CONTACT_LABEL_MAX_LENGTH = 100;
/** Live contact details one account may hold. */
export const MAX_CONTACT_DETAILS_PER_ACCOUNT = 50;

const EMAIL = z.email();
// a leading +, then digits and the usual separators: "+49 (0)30 123-456", "030/123456"
const PHONE = /^\+?[0-9 ()/-]+$/;

/** Why `value` is not a valid contact detail of `type`, or undefined when it is. */
export function contactValueProblem(type: ContactDetailType, value: string): string | undefined {
  const max = CONTACT_VALUE_MAX_LENGTH[type];
  if (value.length > max) return `A ${type} value has at most ${max} characters`;
  switch (type) {
    case 'email':
      return EMAIL.safeParse(value).success ? undefined : 'Must be an email address';
    case 'phone':
    case 'mobile':
    case 'fax': {
      if (!PHONE.test(value)) return 'May hold only digits, spaces, ( ) / - and a leading +';
      const digits = value.replace(/\D/g, '').length;
      return digits >= 3 && digits <= 20 ? undefined : 'Must hold 3 to 20 digits';
    }
    case 'website': {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return 'Must be an absolute http(s) URL';
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Must be an http or https URL';
      if (!url.hostname) return 'Must name a host';
      // credentials in a contact link would be shown to everyone who can read the account
      if (url.username || url.password) return 'Must not contain a user name or password';
      return undefined;
    }
  }
}

const contactValue = z.string().trim().min(1, 'Must not be empty').max(2048);
const contactLabel = z.string().trim().min(1, 'Must not be empty').max(CONTACT_LABEL_MAX_LENGTH);

type ValueCheckInput = { type?: ContactDetailType; value?: string };
/** Checks the value against the type once both parsed; other fields' errors are still reported. */
function checkValueAgainstType<T extends z.ZodType<ValueCheckInput>>(schema: T): T {
  return schema.superRefine(
    (data, ctx) => {
      if (data.type === undefined || data.value === undefined) return;
      const problem = contactValueProblem(data.type, data.value);
      if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
    },
    {
      // `when` makes the check run despite other fields' issues, so it must see an object first
      when: (payload) =>
        typeof payload.value === 'object' &&
        payload.value !== null &&
        !payload.issues.some((issue) => issue.path?.[0] === 'type' || issue.path?.[0] === 'value'),
    },
  ) as unknown as T;
}

export const AccountContactDetailsRead = z
  .object({
    id: z.number().int(),
    accountId: z.number().int(),
    type: z.enum(CONTACT_DETAIL_TYPES),
    value: z.string(),
    label: z.string().nullable(),
    isPrimary: z.boolean(),
    created: timestamp,
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
  })
  .meta({ id: 'AccountContactDetailsRead' });
export type AccountContactDetailsRead = z.infer<typeof AccountContactDetailsRead>;

export const PaginatedListOfAccountContactDetailsRead = Page(AccountContactDetailsRead).meta({
  id: 'PaginatedListOfAccountContactDetailsRead',
});

export const AccountContactDetailsWrite = checkValueAgainstType(
  z.strictObject({
    accountId: z.number().int().min(1).max(2147483647),
    type: z.enum(CONTACT_DETAIL_TYPES),
    value: contactValue.meta({
      description:
        'Checked against `type`: an email address, a phone number (digits, spaces, ( ) / - and a ' +
        'leading +), or an absolute http(s) URL. Surrounding spaces are removed.',
    }),
    label: contactLabel.nullable().optional(),
    isPrimary: z.boolean().optional().meta({
      description: 'Making a detail primary makes the account’s other details of its type non-primary.',
    }),
  }),
).meta({ id: 'AccountContactDetailsWrite' });
export type AccountContactDetailsWrite = z.infer<typeof AccountContactDetailsWrite>;

/** A JSON merge patch of a contact detail: absent leaves a field, null clears `label`. */
export const AccountContactDetailsPatch = checkValueAgainstType(
  z.strictObject({
    type: z.enum(CONTACT_DETAIL_TYPES).optional(),
    value: contactValue.optional(),
    label: contactLabel.nullable().optional(),
    isPrimary: z.boolean().optional(),
  }),
)
  // only when the patch parsed: a patch of unknown fields alone is refused for those, not as empty
  .refine((patch) => Object.keys(patch).length > 0, {
    message: 'Must change at least one field',
    when: (payload) => payload.issues.length === 0,
  })
  .meta({ id: 'AccountContactDetailsPatch' });
export type AccountContactDetailsPatch = z.infer<typeof AccountContactDetailsPatch>;

/** Bulk update body (BulkUpdateDtoOfInt32 of contact details): one patch for many ids. */
export const AccountContactDetailsBulkUpdate = z
  .strictObject({ ids: IdList.shape.ids, patch: AccountContactDetailsPatch })
  .meta({ id: 'BulkUpdateDtoOfInt32OfAccountContactDetails' });
export type AccountContactDetailsBulkUpdate = z.infer<typeof AccountContactDetailsBulkUpdate>;
