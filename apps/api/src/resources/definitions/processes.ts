import type { ResourceDefinition } from '../resource';

export const processResources: ResourceDefinition[] = [];
