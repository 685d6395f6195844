import {
  ALL_PARTY_TYPES,
  MfaConfirmRequest,
  MfaDisableRequest,
  MfaEnrolment,
  MfaRecoveryCodes,
} from '@platform/shared';
import { defineRoute } from '../../http/route';
import { confirmEnrolment, disableMfa, startEnrolment } from './mfa-service';

// one's own account only, so every party type; the default platform scope keeps a
// change-password token out
const ownAccount = { allow: ALL_PARTY_TYPES };
const tags = ['Accounts'];

export const mfaRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/accounts/myself/mfa',
    summary: 'Start enrolling the caller’s account in multi-factor authentication (TOTP)',
    description:
      'Answers a new TOTP secret and its `otpauth://` URI for an authenticator app. The enrolment stays pending ' +
      'until confirmed; calling again replaces a pending secret. 409 when MFA is already enabled.',
    tags,
    auth: ownAccount,
    response: { description: 'The secret to add to an authenticator app', schema: MfaEnrolment },
    errors: [404, 409],
    handler: ({ deps, principal }) => startEnrolment(deps, principal),
  }),
  defineRoute({
    method: 'post',
    path: '/api/accounts/myself/mfa/confirm',
    summary: 'Confirm the pending enrolment with a code of the authenticator app',
    description:
      'Enables multi-factor authentication and answers ten one-time recovery codes, this once. A wrong code is a ' +
      '400; 409 when nothing is pending or MFA is already enabled.',
    tags,
    auth: ownAccount,
    body: MfaConfirmRequest,
    response: { description: 'The recovery codes, shown once', schema: MfaRecoveryCodes },
    errors: [404, 409],
    handler: ({ deps, principal, body }) => confirmEnrolment(deps, principal, body.code),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/accounts/myself/mfa',
    summary: 'Disable multi-factor authentication of the caller’s account',
    description:
      'Needs the password and a code of the authenticator app (or a recovery code); deletes the secret and the ' +
      'recovery codes. Wrong guesses are rate limited per account (429). 409 when MFA is not enabled.',
    tags,
    auth: ownAccount,
    body: MfaDisableRequest,
    status: 204,
    errors: [404, 409, 429],
    handler: ({ deps, principal, body }) => disableMfa(deps, principal, body),
  }),
];
