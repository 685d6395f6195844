import {
  WebhookRegistrationPatch,
  WebhookRegistrationWrite,
  type WebhookRegistrationRead,
} from '@platform/shared';
import { describe, expect, it } from 'vitest';
import {
  deliverySettingsOf,
  EMPTY_REGISTRATION_FORM,
  eventKey,
  formErrorsFromProblem,
  toRegistrationPatch,
  toRegistrationWrite,
  validateDeliverySettings,
  validateRegistrationForm,
  type RegistrationForm,
} from './registration-form';
import { eventsByEntity, eventsSummary, groupingLabel } from './registration-labels';

const form = (overrides: Partial<RegistrationForm> = {}): RegistrationForm => ({
  ...EMPTY_REGISTRATION_FORM,
  targetUrl: 'https://hooks.example.com/in',
  events: new Set([eventKey('Unit', 3), eventKey('Property', 2), eventKey('Property', 1)]),
  ...overrides,
});

describe('registration form', () => {
  it('builds a body the shared schema accepts, events in the spec’s order', () => {
    const body = toRegistrationWrite(
      form({ shouldGroup: true, authType: 4, apiKey: 'key-123', username: 'ignored' }),
    );
    expect(body).toEqual({
      targetUrl: 'https://hooks.example.com/in',
      enabledEvents: [
        { entityName: 'Property', type: 1 },
        { entityName: 'Property', type: 2 },
        { entityName: 'Unit', type: 3 },
      ],
      shouldGroup: true,
      shouldGroupContinueAfterFail: false,
      targetAuthorization: { type: 4, apiKey: 'key-123' },
    });
    expect(WebhookRegistrationWrite.safeParse(body).success).toBe(true);
    const basic = toRegistrationWrite(form({ authType: 1, username: 'u', password: 'p', partyId: '5' }));
    expect(basic.targetAuthorization).toEqual({ type: 1, username: 'u', password: 'p' });
    expect(basic.partyId).toBe(5);
    expect(WebhookRegistrationWrite.safeParse(basic).success).toBe(true);
  });

  it('finds the mistakes the API would refuse', () => {
    expect(validateRegistrationForm(form())).toEqual({});
    const errors = validateRegistrationForm(
      form({
        targetUrl: 'ftp://user:pw@host',
        events: new Set(),
        shouldGroupContinueAfterFail: true,
        authType: 1,
        username: 'a:b',
        partyId: 'x',
      }),
    );
    expect(Object.keys(errors).sort()).toEqual([
      'enabledEvents',
      'partyId',
      'shouldGroupContinueAfterFail',
      'targetAuthorization.password',
      'targetAuthorization.username',
      'targetUrl',
    ]);
    expect(validateRegistrationForm(form({ targetUrl: 'https://x.example/#frag' })).targetUrl).toBeDefined();
    expect(
      validateRegistrationForm(form({ authType: 4, apiKey: 'has space' }))['targetAuthorization.apiKey'],
    ).toBeDefined();
  });

  it('sends rateLimit as a number when given, nothing when empty, and checks it as the API does', () => {
    const limited = toRegistrationWrite(form({ rateLimit: '25' }));
    expect(limited.rateLimit).toBe(25);
    expect(WebhookRegistrationWrite.safeParse(limited).success).toBe(true);
    expect(toRegistrationWrite(form())).not.toHaveProperty('rateLimit');
    for (const bad of ['0', '-1', '2.5', 'fast', '10001'])
      expect(validateRegistrationForm(form({ rateLimit: bad })).rateLimit, bad).toBeDefined();
    expect(validateRegistrationForm(form({ rateLimit: '10000' }))).toEqual({});
    expect(formErrorsFromProblem({ RateLimit: ['Must be at least 1'] })).toEqual({
      rateLimit: ['Must be at least 1'],
    });
  });

  it('keys the API’s validation errors by form field', () => {
    expect(
      formErrorsFromProblem({
        TargetUrl: ['must use http or https'],
        'enabledEvents.2.entityName': ['Unknown entity'],
        'targetAuthorization.apiKey': ['Required'],
        somethingElse: ['?'],
      }),
    ).toEqual({
      targetUrl: ['must use http or https'],
      enabledEvents: ['Unknown entity'],
      'targetAuthorization.apiKey': ['Required'],
      '': ['?'],
    });
  });
});

describe('registration labels', () => {
  const events = [
    { entityName: 'Property', type: 3 },
    { entityName: 'Property', type: 1 },
    { entityName: 'Unit', type: 2 },
  ];

  it('groups events by entity', () => {
    expect(eventsByEntity(events)).toEqual([
      { entityName: 'Property', types: ['Created', 'Deleted'] },
      { entityName: 'Unit', types: ['Updated'] },
    ]);
    expect(eventsSummary(events)).toBe('Property (Created, Deleted); Unit (Updated)');
    const many = ['A', 'B', 'C', 'D'].flatMap((entityName) =>
      [1, 2, 3].map((type) => ({ entityName, type })),
    );
    expect(eventsSummary(many)).toBe('12 events on 4 entities');
    expect(
      eventsSummary([
        { entityName: 'Unit', type: 1 },
        { entityName: 'Unit', type: 2 },
        { entityName: 'Unit', type: 3 },
      ]),
    ).toBe('Unit (all)');
  });

  it('says how a registration groups', () => {
    expect(groupingLabel({ shouldGroup: false, shouldGroupContinueAfterFail: false })).toBe('Not grouped');
    expect(groupingLabel({ shouldGroup: true, shouldGroupContinueAfterFail: true })).toMatch(/continues/);
  });
});

describe('delivery settings (the URL and rate limit of a registration, PATCH)', () => {
  const registration = {
    targetUrl: 'https://hooks.example.com/in',
    rateLimit: null,
  } as unknown as WebhookRegistrationRead;

  it('reads the registration as the form, an unlimited rate as empty', () => {
    expect(deliverySettingsOf(registration)).toEqual({
      targetUrl: 'https://hooks.example.com/in',
      rateLimit: '',
    });
    expect(deliverySettingsOf({ ...registration, rateLimit: 25 }).rateLimit).toBe('25');
  });

  it('sends only what changed, an emptied rate limit as null, and nothing when nothing changed', () => {
    expect(toRegistrationPatch(deliverySettingsOf(registration), registration)).toBeNull();
    expect(
      toRegistrationPatch({ targetUrl: ' https://hooks.example.com/new ', rateLimit: '' }, registration),
    ).toEqual({
      targetUrl: 'https://hooks.example.com/new',
    });
    expect(toRegistrationPatch({ targetUrl: registration.targetUrl, rateLimit: '10' }, registration)).toEqual(
      {
        rateLimit: 10,
      },
    );
    expect(
      toRegistrationPatch(
        { targetUrl: registration.targetUrl, rateLimit: '' },
        { ...registration, rateLimit: 10 },
      ),
    ).toEqual({ rateLimit: null });
    // what it builds is what the API's schema accepts
    expect(
      WebhookRegistrationPatch.safeParse({ targetUrl: 'https://hooks.example.com/new', rateLimit: null })
        .success,
    ).toBe(true);
  });

  it('checks the URL and the limit with the create form’s rules, naming the field', () => {
    expect(validateDeliverySettings({ targetUrl: '', rateLimit: '' })).toEqual({
      targetUrl: ['Enter the URL the webhooks are posted to.'],
    });
    expect(Object.keys(validateDeliverySettings({ targetUrl: 'ftp://x', rateLimit: '0' }))).toEqual([
      'targetUrl',
      'rateLimit',
    ]);
    expect(
      validateDeliverySettings({ targetUrl: 'https://hooks.example.com/in', rateLimit: '10001' }).rateLimit,
    ).toHaveLength(1);
    expect(
      validateDeliverySettings({ targetUrl: 'https://hooks.example.com/in', rateLimit: '10000' }),
    ).toEqual({});
    // the create form applies the same rule
    expect(validateRegistrationForm(form({ rateLimit: '2.5' })).rateLimit).toEqual(
      validateDeliverySettings({ targetUrl: 'https://hooks.example.com/in', rateLimit: '2.5' }).rateLimit,
    );
  });
});
