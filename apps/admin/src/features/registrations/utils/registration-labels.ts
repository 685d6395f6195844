import type { WebhookEventRead, WebhookRegistrationRead } from '@platform/shared';
import { eventTypeName } from '../../../lib/webhook-states';

/** Subscribed events grouped by entity: `Property: Created, Updated; Unit: Deleted`. */
export function eventsByEntity(events: readonly Pick<WebhookEventRead, 'entityName' | 'type'>[]): {
  entityName: string;
  types: string[];
}[] {
  const byEntity = new Map<string, number[]>();
  for (const event of events) {
    const types = byEntity.get(event.entityName) ?? [];
    types.push(event.type);
    byEntity.set(event.entityName, types);
  }
  return [...byEntity.entries()].map(([entityName, types]) => ({
    entityName,
    types: types.sort((a, b) => a - b).map(eventTypeName),
  }));
}

/** A short summary for a table cell: `Property (3), Unit (1)` or `9 events on 4 entities`. */
export function eventsSummary(events: readonly Pick<WebhookEventRead, 'entityName' | 'type'>[]): string {
  const grouped = eventsByEntity(events);
  if (grouped.length === 0) return 'None';
  if (grouped.length <= 3) {
    return grouped
      .map((group) => `${group.entityName} (${group.types.length === 3 ? 'all' : group.types.join(', ')})`)
      .join('; ');
  }
  return `${events.length} events on ${grouped.length} entities`;
}

/** `Grouped`, `Grouped, continues after a failure`, or `Not grouped`. */
export function groupingLabel(
  registration: Pick<WebhookRegistrationRead, 'shouldGroup' | 'shouldGroupContinueAfterFail'>,
): string {
  if (!registration.shouldGroup) return 'Not grouped';
  return registration.shouldGroupContinueAfterFail ? 'Grouped, continues after a failure' : 'Grouped';
}
