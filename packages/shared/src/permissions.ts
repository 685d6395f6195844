import { z } from 'zod';
import { Page } from './pagination';

/**
 * The permission catalog. A permission is (resource, action); its id is its bit in the token's
 * `permissions` bitset, so this list is append-only: never reorder or remove a resource.
 */
export const PermissionAction = { Create: 0, Read: 1, Update: 2, Delete: 3 } as const;
export type PermissionAction = (typeof PermissionAction)[keyof typeof PermissionAction];
const ACTION_NAMES = ['Create', 'Read', 'Update', 'Delete'] as const;

export const PERMISSION_RESOURCES = [
  'Account',
  'AccountContactDetails',
  'Party',
  'ContactDetails',
  'Property',
  'Entrance',
  'Unit',
  'UnitContract',
  'Document',
  'File',
  'Process',
  'ProcessFeed',
  'WorkOrder',
  'Inquiry',
  'Notice',
  'Conference',
  'WebhookRegistration',
  'Webhook',
] as const;
export type PermissionResource = (typeof PERMISSION_RESOURCES)[number];
export type PermissionName = `${PermissionResource}.${(typeof ACTION_NAMES)[number]}`;

export interface Permission {
  id: number;
  name: PermissionName;
  resource: PermissionResource;
  action: PermissionAction;
}

export const PERMISSIONS: readonly Permission[] = PERMISSION_RESOURCES.flatMap((resource, index) =>
  ACTION_NAMES.map((actionName, action) => ({
    id: index * 4 + action,
    name: `${resource}.${actionName}` as PermissionName,
    resource,
    action: action as PermissionAction,
  })),
);

const BY_NAME = new Map(PERMISSIONS.map((p) => [p.name, p]));

/** The permission with this name; throws on a name outside the catalog (a programming error). */
export function permissionByName(name: PermissionName): Permission {
  const permission = BY_NAME.get(name);
  if (!permission) throw new Error(`unknown permission ${name}`);
  return permission;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const isCatalogId = (id: number) => Number.isInteger(id) && id >= 0 && id < PERMISSIONS.length;

/**
 * Encodes permission ids as the token's compact `permissions` claim: a base64url bitset (bit
 * `id % 8` of byte `id / 8`). Ids outside the catalog are left out.
 */
export function encodePermissions(ids: Iterable<number>): string {
  const bytes = new Uint8Array(Math.ceil(PERMISSIONS.length / 8));
  for (const id of ids) if (isCatalogId(id)) bytes[id >> 3]! |= 1 << (id & 7);
  return toBase64Url(bytes);
}

// unpadded base64url; a length of 1 modulo 4 cannot be base64 at all
const BASE64URL = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?$/;

/**
 * Decodes the `permissions` claim into a set of permission ids; garbage (anything but unpadded
 * base64url, which `atob` alone would accept: `+`, `/`, `=`, spaces) decodes to none, and bits
 * beyond the catalog are ignored.
 */
export function decodePermissions(claim: string): Set<number> {
  const ids = new Set<number>();
  if (typeof claim !== 'string' || !BASE64URL.test(claim)) return ids;
  const bytes = fromBase64Url(claim);
  bytes.forEach((byte, index) => {
    for (let bit = 0; bit < 8; bit++) {
      const id = index * 8 + bit;
      if (byte & (1 << bit) && isCatalogId(id)) ids.add(id);
    }
  });
  return ids;
}

const permissionAction = z
  .number()
  .int()
  .min(0)
  .max(3)
  .meta({ description: 'Create 0, Read 1, Update 2, Delete 3' });

/** A permission of the catalog; `id` is its bit in the token's `permissions` claim. */
export const PermissionRead = z
  .object({
    id: z.number().int(),
    name: z.string().meta({ description: '`<resource>.<action name>`, as in `Account.Create`' }),
    resource: z.enum(PERMISSION_RESOURCES),
    action: permissionAction,
  })
  .meta({ id: 'PermissionRead' });
export type PermissionRead = z.infer<typeof PermissionRead>;

export const PaginatedListOfPermissionRead = Page(PermissionRead).meta({
  id: 'PaginatedListOfPermissionRead',
});

/** One permission an account group grants. */
export const AccountGroupPermissionMapping = z
  .object({
    groupId: z.number().int(),
    permissionId: z.number().int(),
    permissionName: z.string(),
    resource: z.enum(PERMISSION_RESOURCES),
    action: permissionAction,
  })
  .meta({ id: 'AccountGroupPermissionMapping' });
export type AccountGroupPermissionMapping = z.infer<typeof AccountGroupPermissionMapping>;

export const PaginatedListOfAccountGroupPermissionMapping = Page(AccountGroupPermissionMapping).meta({
  id: 'PaginatedListOfAccountGroupPermissionMapping',
});
