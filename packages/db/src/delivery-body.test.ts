import { InquiryRead, WebhookDeliveryBody } from '@platform/shared';
import { SPEC_INQUIRY_FIELDS } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { deliveryBody, type DeliveryChangeRow, type DeliveryEventRow } from './delivery-body';

/** An Inquiry with exactly its fields (docs/resources.md#processes). */
const inquiry = {
  id: 41,
  sourceId: 1,
  categoryId: 2,
  connectedPartyId: 7,
  creatorAccountId: 12,
  creatorAccountRole: 2,
  receiverPartyId: 3,
  readStatus: 0,
  report: '<p>The heating in flat 4 is broken.</p>',
  subject: 'Heating',
  rejectionResponse: null,
  completionResponse: null,
  connectedPropertyId: 5,
  connectedUnitId: 9,
  associatedProcessId: null,
  associatedProcessFeedEntryId: null,
  associatedTodoId: null,
  priority: 2,
  readByAccountId: null,
  dueDate: '2026-12-01',
  created: '2026-11-22T08:00:00.000Z',
  lastModified: '2026-11-22T09:30:00.000Z',
  deleted: null,
};

// rows as pg returns them: jsonb parsed, timestamptz as Date
const change: DeliveryChangeRow = { entity: inquiry, initiator_party_id: 3, initiator_account_id: 12 };
const event: DeliveryEventRow = {
  id: 88,
  type: 2,
  entity_name: 'Inquiry',
  created: new Date('2026-11-01T10:00:00.000Z'),
  last_modified: null,
  deleted: null,
};

describe('deliveryBody', () => {
  it('shapes an Inquiry change as docs/webhooks.md#the-delivery-request says', () => {
    const body = deliveryBody(change, event);
    expect(body).toEqual({
      entity: inquiry,
      event: {
        id: 88,
        type: 2,
        entityName: 'Inquiry',
        created: '2026-11-01T10:00:00.000Z',
        lastModified: null,
        deleted: null,
      },
      initiatorPartyId: 3,
      initiatorAccountId: 12,
    });
    // exactly the top-level fields of docs/webhooks.md#the-delivery-request (no token without authorization type 3)
    expect(Object.keys(body).sort()).toEqual(['entity', 'event', 'initiatorAccountId', 'initiatorPartyId']);
    expect(Object.keys(body.event).sort()).toEqual(
      ['created', 'deleted', 'entityName', 'id', 'lastModified', 'type'].sort(),
    );
    // the entity travels untouched: exactly the Inquiry fields of docs/resources.md#processes
    expect(Object.keys(body.entity).sort()).toEqual([...SPEC_INQUIRY_FIELDS].sort());
    // it is the API's Inquiry read shape, and the body is the documented delivery schema
    expect(InquiryRead.parse(body.entity)).toEqual(inquiry);
    expect(WebhookDeliveryBody.parse(JSON.parse(JSON.stringify(body)))).toEqual(body);
  });

  it('adds the platform-signed token only when given (authorization type 3)', () => {
    const body = deliveryBody(change, event, { platformSignedBearerToken: 'eyJ.token' });
    expect(body.platformSignedBearerToken).toBe('eyJ.token');
    expect(deliveryBody(change, event)).not.toHaveProperty('platformSignedBearerToken');
  });

  it('writes every event timestamp as ISO 8601 and keeps a change without an account', () => {
    const body = deliveryBody(
      { ...change, initiator_account_id: null },
      {
        ...event,
        type: 3,
        last_modified: new Date('2026-11-02T10:00:00.000Z'),
        deleted: '2026-11-03 10:00:00+00',
      },
    );
    expect(body.event).toMatchObject({
      type: 3,
      lastModified: '2026-11-02T10:00:00.000Z',
      deleted: '2026-11-03T10:00:00.000Z',
    });
    expect(body.initiatorAccountId).toBeNull();
  });
});
