import type { EntityChangeInput } from './enqueue';

/** An update of Unit `entityId` by `partyId`: the change the queue tests enqueue. */
export const unitChange = (partyId: number, entityId: number): EntityChangeInput => ({
  entityName: 'Unit',
  type: 2,
  entityId,
  entity: { id: entityId },
  initiatorPartyId: partyId,
  initiatorAccountId: null,
});
