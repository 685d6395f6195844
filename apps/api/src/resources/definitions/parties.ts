import type { ResourceDefinition } from '../resource';

export const partyResources: ResourceDefinition[] = [];
