import type { RouteDefinition } from '../../http/route';

export const permissionRoutes: RouteDefinition[] = [];
