import type {
  AccountGroupPermissionMapping,
  PermissionAction,
  PermissionRead,
  PermissionResource,
} from '@platform/shared';

export interface PermissionRow {
  id: number;
  name: string;
  resource: string;
  action: number;
}

/** The PermissionRead shape of a `permissions` row. */
export function presentPermission(row: PermissionRow): PermissionRead {
  return {
    id: row.id,
    name: row.name,
    // the table is upserted from the catalog after every migration, so it holds catalog values only
    resource: row.resource as PermissionResource,
    action: row.action as PermissionAction,
  };
}

/** The AccountGroupPermissionMapping shape of a permission that group `groupId` grants. */
export function presentGroupPermission(groupId: number, row: PermissionRow): AccountGroupPermissionMapping {
  return {
    groupId,
    permissionId: row.id,
    permissionName: row.name,
    resource: row.resource as PermissionResource,
    action: row.action as PermissionAction,
  };
}
