import type { ResourceDefinition } from '../resource';

export const conferenceResources: ResourceDefinition[] = [];
