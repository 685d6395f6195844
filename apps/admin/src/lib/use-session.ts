import type { PermissionName } from '@platform/shared';
import { permissionByName } from '@platform/shared';
import { useSyncExternalStore } from 'react';
import { sessionStore } from './api';
import type { Session } from './session';

/** The signed-in operator's session, re-rendering when it starts, refreshes or ends. */
export function useSession(): Session | null {
  return useSyncExternalStore(sessionStore.subscribe, sessionStore.get);
}

/** Whether the session's token grants `permission` (the API decides; this only shapes the UI). */
export function hasPermission(session: Session | null, permission: PermissionName): boolean {
  return session?.claims.permissions.has(permissionByName(permission).id) ?? false;
}

/** Whether the signed-in operator holds `permission`. */
export function usePermission(permission: PermissionName): boolean {
  return hasPermission(useSession(), permission);
}
