import type { RouteDefinition } from './http/route';
import { accountRoutes } from './features/accounts/account-routes';
import { authRoutes } from './features/auth/auth-routes';

/** Every Gen2 route; the router and the OpenAPI document are both built from this list. */
export const ROUTES: readonly RouteDefinition[] = [...authRoutes, ...accountRoutes];
