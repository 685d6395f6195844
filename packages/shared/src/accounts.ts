import { z } from 'zod';
import { Page } from './pagination';

const timestamp = z.iso.datetime({ offset: true });

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
