import type { ResourceDefinition } from '../resource';

export const documentResources: ResourceDefinition[] = [];
