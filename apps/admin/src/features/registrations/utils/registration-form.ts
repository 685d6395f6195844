import {
  MAX_RATE_LIMIT,
  targetUrlProblem,
  WebhookAuthType,
  WEBHOOK_ENTITY_NAMES,
  type WebhookRegistrationPatch,
  type WebhookRegistrationRead,
  type WebhookRegistrationWrite,
} from '@platform/shared';

/** What the create form holds, as typed. */
export interface RegistrationForm {
  targetUrl: string;
  /** Selected events as `Entity:type` keys (`Property:1`). */
  events: ReadonlySet<string>;
  shouldGroup: boolean;
  shouldGroupContinueAfterFail: boolean;
  authType: number;
  username: string;
  password: string;
  apiKey: string;
  /** Admin only: the party the registration serves; empty for the operator's own. */
  partyId: string;
  /** Deliveries per second at most, as typed; empty for no limit. */
  rateLimit: string;
}

export const EMPTY_REGISTRATION_FORM: RegistrationForm = {
  targetUrl: '',
  events: new Set(),
  shouldGroup: false,
  shouldGroupContinueAfterFail: false,
  authType: WebhookAuthType.NoAuth,
  username: '',
  password: '',
  apiKey: '',
  partyId: '',
  rateLimit: '',
};

/** What can change on a registration after it is created (PATCH): where it delivers, and how fast. */
export type DeliverySettingsForm = Pick<RegistrationForm, 'targetUrl' | 'rateLimit'>;

/** The target URL and rate limit checks, shared by the create form and the settings edit. */
export function validateDeliverySettings(form: DeliverySettingsForm): FormErrors {
  const errors: FormErrors = {};
  if (!form.targetUrl.trim()) errors.targetUrl = ['Enter the URL the webhooks are posted to.'];
  else {
    const problem = targetUrlProblem(form.targetUrl);
    if (problem) errors.targetUrl = [`The URL ${problem}.`];
  }
  if (form.rateLimit && !(/^[1-9]\d{0,4}$/.test(form.rateLimit) && Number(form.rateLimit) <= MAX_RATE_LIMIT))
    errors.rateLimit = [
      `Enter a whole number of deliveries per second from 1 to ${MAX_RATE_LIMIT}, or leave it empty.`,
    ];
  return errors;
}

/** The settings form of a registration as it is now. */
export const deliverySettingsOf = (registration: WebhookRegistrationRead): DeliverySettingsForm => ({
  targetUrl: registration.targetUrl,
  rateLimit: registration.rateLimit === null ? '' : String(registration.rateLimit),
});

/**
 * The PATCH body of a valid settings form: only what differs from `registration` (an empty rate
 * limit clears it: null); null when nothing changed.
 */
export function toRegistrationPatch(
  form: DeliverySettingsForm,
  registration: WebhookRegistrationRead,
): WebhookRegistrationPatch | null {
  const patch: WebhookRegistrationPatch = {};
  const targetUrl = form.targetUrl.trim();
  if (targetUrl !== registration.targetUrl) patch.targetUrl = targetUrl;
  const rateLimit = form.rateLimit ? Number(form.rateLimit) : null;
  if (rateLimit !== registration.rateLimit) patch.rateLimit = rateLimit;
  return Object.keys(patch).length > 0 ? patch : null;
}

/** The key of one subscribable event in the picker. */
export const eventKey = (entityName: string, type: number) => `${entityName}:${type}`;

/** Field → messages, with the API's field paths (`targetAuthorization.username`). */
export type FormErrors = Record<string, string[]>;

/**
 * Checks the form the way the API will (the same rules from @platform/shared where they are
 * exported), so most mistakes show before a round trip; the API stays the judge.
 */
export function validateRegistrationForm(form: RegistrationForm): FormErrors {
  const errors: FormErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  Object.assign(errors, validateDeliverySettings(form));
  if (form.events.size === 0) add('enabledEvents', 'Choose at least one event.');
  if (form.shouldGroupContinueAfterFail && !form.shouldGroup) {
    add('shouldGroupContinueAfterFail', 'Applies only to grouped registrations; turn on grouping too.');
  }
  if (form.authType === WebhookAuthType.BasicAuth) {
    if (!form.username) add('targetAuthorization.username', 'Enter the user name.');
    else if (form.username.includes(':'))
      add('targetAuthorization.username', 'A Basic Auth user name cannot contain a colon.');
    if (!form.password) add('targetAuthorization.password', 'Enter the password.');
  }
  if (form.authType === WebhookAuthType.TargetApiToken) {
    if (!form.apiKey) add('targetAuthorization.apiKey', 'Enter the API key.');
    else if (!/^[\x21-\x7e]+$/.test(form.apiKey)) {
      add(
        'targetAuthorization.apiKey',
        'Use visible ASCII characters without spaces (it is sent as a header).',
      );
    }
  }
  if (form.partyId && !/^[1-9]\d{0,9}$/.test(form.partyId))
    add('partyId', 'Enter a party id (a whole number).');
  return errors;
}

/** The request body of a valid form, events in the spec's entity order. */
export function toRegistrationWrite(form: RegistrationForm): WebhookRegistrationWrite {
  const enabledEvents = WEBHOOK_ENTITY_NAMES.flatMap((entityName) =>
    [1, 2, 3]
      .filter((type) => form.events.has(eventKey(entityName, type)))
      .map((type) => ({ entityName, type })),
  );
  const targetAuthorization: WebhookRegistrationWrite['targetAuthorization'] = { type: form.authType };
  if (form.authType === WebhookAuthType.BasicAuth) {
    targetAuthorization.username = form.username;
    targetAuthorization.password = form.password;
  }
  if (form.authType === WebhookAuthType.TargetApiToken) targetAuthorization.apiKey = form.apiKey;
  return {
    targetUrl: form.targetUrl.trim(),
    enabledEvents,
    shouldGroup: form.shouldGroup,
    shouldGroupContinueAfterFail: form.shouldGroup && form.shouldGroupContinueAfterFail,
    targetAuthorization,
    ...(form.rateLimit ? { rateLimit: Number(form.rateLimit) } : {}),
    ...(form.partyId ? { partyId: Number(form.partyId) } : {}),
  };
}

/**
 * The API's validation errors keyed for the form: `enabledEvents.3.entityName` counts as
 * `enabledEvents`; keys are matched case-insensitively, as the API matches property names.
 */
export function formErrorsFromProblem(errors: Record<string, string[]>): FormErrors {
  const known = [
    'targetUrl',
    'enabledEvents',
    'shouldGroup',
    'shouldGroupContinueAfterFail',
    'rateLimit',
    'partyId',
  ];
  const result: FormErrors = {};
  for (const [key, messages] of Object.entries(errors)) {
    const lower = key.toLowerCase();
    const field = lower.startsWith('targetauthorization.')
      ? `targetAuthorization.${key.split('.')[1] ?? ''}`
      : (known.find((name) => lower === name.toLowerCase() || lower.startsWith(`${name.toLowerCase()}.`)) ??
        '');
    (result[field] ??= []).push(...messages);
  }
  return result;
}
