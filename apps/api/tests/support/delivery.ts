import {
  startDispatcher,
  startTestTarget,
  type DispatcherProcess,
  type ReceivedRequest,
  type TargetScript,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestApi } from './api';

/** What `useDelivery` starts, filled in by its `beforeAll`. */
export interface Delivery {
  target: TestTarget;
  dispatcher: DispatcherProcess;
}

/**
 * A recording target (answering as `script` says) and a dispatcher over `api`'s database, for a
 * file whose tests watch webhooks delivered. Call it after `useTestApi`: `beforeAll` starts both
 * once the API is up, `afterAll` stops them before it closes, and the dispatcher must exit 0.
 */
export function useDelivery(api: TestApi, script?: TargetScript): Delivery {
  const delivery = {} as Delivery;
  beforeAll(async () => {
    delivery.target = await startTestTarget(script);
    delivery.dispatcher = await startDispatcher(api.db.url);
  }, 60_000);
  afterAll(async () => {
    expect(await delivery.dispatcher?.stop()).toBe(0);
    await delivery.target?.close();
  });
  return delivery;
}

/** The one request `target` received for webhook `webhookId`; fails on none or several. */
export function onlyDelivery(target: TestTarget, webhookId: number): ReceivedRequest {
  const requests = target.requestsFor(webhookId);
  expect(requests, `deliveries of webhook ${webhookId}`).toHaveLength(1);
  return requests[0]!;
}
