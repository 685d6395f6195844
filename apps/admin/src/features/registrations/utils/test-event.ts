import {
  webhookEntityName,
  type WebhookEventRead,
  type WebhookTestRequest,
  type WebhookTestResult,
} from '@platform/shared';
import { eventTypeName } from '../../../lib/webhook-states';

/** An event a test delivery can stand for: one the registration subscribes to. */
export interface TestEventOption {
  /** `Property:1`, the select's value; empty for the API's default. */
  value: string;
  label: string;
}

/** The choices of the test event's select: the API's default first, then each subscribed event. */
export function testEventOptions(
  events: readonly Pick<WebhookEventRead, 'entityName' | 'type'>[],
): TestEventOption[] {
  return [
    { value: '', label: 'First subscribed event (default)' },
    ...events.map((event) => ({
      value: `${event.entityName}:${event.type}`,
      label: `${event.entityName} ${eventTypeName(event.type)}`,
    })),
  ];
}

/** The request of a select value: empty asks for the default. */
export function testEventRequest(value: string): WebhookTestRequest {
  const match = /^([^:]+):(\d+)$/.exec(value);
  const entityName = match ? webhookEntityName(match[1]!) : undefined;
  return entityName ? { entityName, type: Number(match![2]) } : {};
}

/** Whether the target accepted the test delivery (a 2xx without an error). */
export function testEventSucceeded(result: WebhookTestResult): boolean {
  return (
    result.errorKind === null &&
    result.statusCode !== null &&
    result.statusCode >= 200 &&
    result.statusCode < 300
  );
}
