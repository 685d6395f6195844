import type { RouteDefinition } from '../http/route';
import { propertyResource } from './definitions/property';
import type { ResourceDefinition } from './resource';
import { resourceRoutes } from './resource-routes';

/** Every domain resource; each one's routes and OpenAPI entries come from its declaration. */
export const RESOURCES: readonly ResourceDefinition[] = [propertyResource];

export const resourceRouteList: RouteDefinition[] = RESOURCES.flatMap(resourceRoutes);
