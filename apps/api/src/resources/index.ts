import type { RouteDefinition } from '../http/route';
import { conferenceResources } from './definitions/conferences';
import { documentResources } from './definitions/documents';
import { partyResources } from './definitions/parties';
import { processResources } from './definitions/processes';
import { propertyResource } from './definitions/property';
import { realEstateResources } from './definitions/real-estate';
import type { ResourceDefinition } from './resource';
import { resourceRoutes } from './resource-routes';

/** Every domain resource; each one's routes and OpenAPI entries come from its declaration. */
export const RESOURCES: readonly ResourceDefinition[] = [
  ...partyResources,
  propertyResource,
  ...realEstateResources,
  ...documentResources,
  ...processResources,
  ...conferenceResources,
];

export const resourceRouteList: RouteDefinition[] = RESOURCES.flatMap(resourceRoutes);
