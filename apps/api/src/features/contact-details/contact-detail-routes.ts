import type { RouteDefinition } from '../../http/route';

export const contactDetailRoutes: RouteDefinition[] = [];
