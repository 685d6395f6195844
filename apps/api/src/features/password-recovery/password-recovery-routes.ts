import {
  AccountActivationMessageResponse,
  PartyType,
  PasswordChangeRecoveryCodeRequest,
  PasswordChangeRecoveryCodeResponseDto,
  PasswordRecoveryRequest,
  PasswordRecoveryResponseDto,
  UnblockRecoveryCodeRequest,
  UnblockRecoveryCodeResponse,
} from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import {
  changePasswordWithRecoveryCode,
  recoverPassword,
  sendActivationMessage,
  unblockRecoveryCode,
} from './password-recovery-service';

const adminOrPmc = { allow: [PartyType.Admin, PartyType.PropertyManagementCompany] };

/** One operation under two paths, both kept for clients (docs/decisions.md#password-recovery). */
const unblockRoute = (path: string, tags: string[]) =>
  defineRoute({
    method: 'post',
    path,
    summary: 'Unblock the password recovery of an account',
    description:
      'Lifts the block that 5 wrong recovery codes put on an account’s recovery, and forgets its wrong codes. ' +
      'The account must be within the caller’s scope (404 otherwise). Also served at ' +
      (path.startsWith('/api/accounts/')
        ? '/api/account/unblock-recovery-code.'
        : '/api/accounts/unblock-recovery-code.'),
    tags,
    deprecated: true,
    auth: adminOrPmc,
    body: UnblockRecoveryCodeRequest,
    response: { description: 'The account is unblocked', schema: UnblockRecoveryCodeResponse },
    errors: [404],
    handler: ({ deps, principal, body }) => unblockRecoveryCode(deps, principal, body.email),
  });

export const passwordRecoveryRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/auth/recover-password',
    summary: 'Mail a password recovery code',
    description:
      'Mails a one-time recovery code (valid 30 minutes by default) to the account with this email. The answer is ' +
      'the same whether or not such an account exists; a blocked account gets no code. Rate limited by the policy ' +
      'DefaultRateLimitAuth per email and per client address (429 with Retry-After).',
    tags: ['Authentication'],
    deprecated: true,
    auth: 'public',
    body: PasswordRecoveryRequest,
    response: { description: 'The request was taken', schema: PasswordRecoveryResponseDto },
    errors: [429],
    handler: ({ deps, body, ctx }) => recoverPassword(deps, body.email, ctx.ip),
  }),
  defineRoute({
    method: 'put',
    path: '/api/auth/change-password-with-recovery-code',
    summary: 'Set a new password with a recovery code',
    description:
      'A wrong, expired or used code (or an unknown email) is a 400. The 5th wrong code in a row blocks the ' +
      'account’s recovery for 24 hours (by default): 403, even with the right code, until the block ends or is lifted. ' +
      'Success signs the account out of every session. Rate limited per client address (429 with Retry-After).',
    tags: ['Authentication'],
    deprecated: true,
    auth: 'public',
    body: PasswordChangeRecoveryCodeRequest,
    response: { description: 'The password is changed', schema: PasswordChangeRecoveryCodeResponseDto },
    errors: [403, 429],
    handler: ({ deps, body, ctx }) => changePasswordWithRecoveryCode(deps, body, ctx.ip),
  }),
  unblockRoute('/api/account/unblock-recovery-code', ['Authentication']),
  unblockRoute('/api/accounts/unblock-recovery-code', ['Accounts']),
  defineRoute({
    method: 'post',
    path: '/api/accounts/:id/activation-message',
    summary: 'Mail an account a code to set its password',
    description:
      'Sends the account a password recovery mail with a one-time code. 409 while the account’s recovery is blocked.',
    tags: ['Accounts'],
    deprecated: true,
    auth: adminOrPmc,
    params: z.strictObject({ id: pathId }),
    response: { description: 'The mail is sent', schema: AccountActivationMessageResponse },
    errors: [404, 409],
    handler: ({ deps, principal, params }) => sendActivationMessage(deps, principal, params.id),
  }),
];
