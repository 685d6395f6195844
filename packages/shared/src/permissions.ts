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

/** Encodes permission ids as the token's compact `permissions` claim: a base64url bitset. */
export function encodePermissions(ids: Iterable<number>): string {
  const bytes = new Uint8Array(Math.ceil(PERMISSIONS.length / 8));
  for (const id of ids) bytes[id >> 3]! |= 1 << (id & 7);
  return toBase64Url(bytes);
}

/** Decodes the `permissions` claim into a set of permission ids; garbage decodes to none. */
export function decodePermissions(claim: string): Set<number> {
  const ids = new Set<number>();
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(claim);
  } catch {
    return ids;
  }
  bytes.forEach((byte, index) => {
    for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) ids.add(index * 8 + bit);
  });
  return ids;
}
