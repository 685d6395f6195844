import type { RouteDefinition } from '../../http/route';

export const recoveryRoutes: RouteDefinition[] = [];
