import type { RouteDefinition } from '../../http/route';

export const mfaRoutes: RouteDefinition[] = [];
