import type { RouteDefinition } from './http/route';
import { accountRoutes } from './features/accounts/account-routes';
import { authRoutes } from './features/auth/auth-routes';
import { contactDetailRoutes } from './features/contact-details/contact-detail-routes';
import { mfaRoutes } from './features/mfa/mfa-routes';
import { operatorActionRoutes } from './features/operator-actions/operator-action-routes';
import { permissionRoutes } from './features/permissions/permission-routes';
import { passwordRecoveryRoutes } from './features/password-recovery/password-recovery-routes';
import { webhookCatalogOpenApi } from './features/webhook-event-types/webhook-event-openapi';
import { webhookEventTypeRoutes } from './features/webhook-event-types/webhook-event-type-routes';
import { webhookIssueRoutes } from './features/webhook-issues/webhook-issue-routes';
import { webhookRegistrationRoutes } from './features/webhook-registrations/webhook-registration-routes';
import { webhookRoutes } from './features/webhooks/webhook-routes';
import { webhookGroupRoutes } from './features/webhook-groups/webhook-group-routes';
import { operationRoutes } from './features/webhook-operations/operation-routes';
import { portalSessionRoutes } from './features/webhook-portal/portal-session-routes';
import { webhookNotificationRoutes } from './features/webhook-notifications/webhook-notification-routes';
import { webhookStatsRoutes } from './features/webhook-stats/webhook-stats-routes';
import { resourceRouteList } from './resources/index';

/** Every Gen2 route; the router and the OpenAPI document are both built from this list. */
export const ROUTES: readonly RouteDefinition[] = [
  ...authRoutes,
  ...mfaRoutes,
  ...passwordRecoveryRoutes,
  ...accountRoutes,
  ...contactDetailRoutes,
  ...permissionRoutes,
  ...resourceRouteList,
  ...webhookRegistrationRoutes,
  ...webhookRoutes,
  ...webhookGroupRoutes,
  ...operationRoutes,
  ...webhookStatsRoutes,
  ...operatorActionRoutes,
  ...webhookIssueRoutes,
  ...webhookEventTypeRoutes,
  ...portalSessionRoutes,
  ...webhookNotificationRoutes,
];

/** Every webhook the API sends, one per subscribable entity and event: the document's `webhooks`. */
export const WEBHOOKS = webhookCatalogOpenApi();
