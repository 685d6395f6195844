import type { ResourceDefinition } from '../resource';

export const realEstateResources: ResourceDefinition[] = [];
