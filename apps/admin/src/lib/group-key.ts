import { webhookEntityName } from '@platform/shared';

/**
 * The entity a group key stands for: `Property:42` → { entityName: 'Property', entityId: 42 }
 * (docs/webhooks.md#ordering: `group_key = entityName:entityId`). Undefined parts when it is not of that form.
 */
export function parseGroupKey(groupKey: string): { entityName?: string; entityId?: number } {
  const separator = groupKey.lastIndexOf(':');
  if (separator < 0) return {};
  const name = groupKey.slice(0, separator);
  const id = groupKey.slice(separator + 1);
  const entityId = /^[1-9]\d{0,9}$/.test(id) && Number(id) <= 2_147_483_647 ? Number(id) : undefined;
  return { entityName: webhookEntityName(name), entityId };
}

/** The console path of the webhooks table showing the webhooks of one group. */
export function groupWebhooksPath(registrationId: number, groupKey: string): string {
  const { entityName, entityId } = parseGroupKey(groupKey);
  const params = new URLSearchParams({ registrationId: String(registrationId) });
  if (entityName) params.set('entityName', entityName);
  if (entityId !== undefined) params.set('entityId', String(entityId));
  return `/webhooks?${params.toString()}`;
}
