/** The console's screens. */
export type Route =
  | { name: 'overview' }
  | { name: 'webhooks' }
  | { name: 'webhook'; id: number }
  | { name: 'registrations' }
  | { name: 'registration-new' }
  | { name: 'registration'; id: number }
  | { name: 'webhook-groups' }
  | { name: 'webhook-issues' }
  | { name: 'operator-actions' }
  | { name: 'webhook-operation'; id: number }
  | { name: 'event-catalog' }
  | { name: 'notifications' }
  /** An address the console used to have: the screen now at `to` (the same query applies). */
  | { name: 'moved'; to: string }
  | { name: 'not-found' };

/**
 * The console's screens take the API's names (`/webhook-groups` shows `GET /api/webhook-groups`);
 * the addresses they had before still work, redirecting to these.
 */
const MOVED: Readonly<Record<string, string>> = {
  'blocked-groups': 'webhook-groups',
  triage: 'webhook-issues',
  audit: 'operator-actions',
  operations: 'webhook-operations',
};

const id = (text: string | undefined): number | undefined =>
  text && /^[1-9]\d{0,15}$/.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER ? Number(text) : undefined;

/** The screen of a console path (`/webhooks/42`); trailing slashes do not matter. */
export function matchRoute(path: string): Route {
  const parts = path.split('/').filter(Boolean);
  const [first, second, ...rest] = parts;
  if (rest.length > 0) return { name: 'not-found' };
  const moved = first === undefined ? undefined : MOVED[first];
  if (moved !== undefined) {
    const to = `/${[moved, ...parts.slice(1)].join('/')}`;
    return matchRoute(to).name === 'not-found' ? { name: 'not-found' } : { name: 'moved', to };
  }
  if (first === undefined) return { name: 'overview' };
  if (first === 'webhooks') {
    if (second === undefined) return { name: 'webhooks' };
    const webhookId = id(second);
    return webhookId === undefined ? { name: 'not-found' } : { name: 'webhook', id: webhookId };
  }
  if (first === 'registrations') {
    if (second === undefined) return { name: 'registrations' };
    if (second === 'new') return { name: 'registration-new' };
    const registrationId = id(second);
    return registrationId === undefined || registrationId > 2_147_483_647
      ? { name: 'not-found' }
      : { name: 'registration', id: registrationId };
  }
  if (first === 'webhook-groups' && second === undefined) return { name: 'webhook-groups' };
  if (first === 'webhook-issues' && second === undefined) return { name: 'webhook-issues' };
  if (first === 'operator-actions' && second === undefined) return { name: 'operator-actions' };
  if (first === 'webhook-event-types' && second === undefined) return { name: 'event-catalog' };
  if (first === 'webhook-notifications' && second === undefined) return { name: 'notifications' };
  if (first === 'webhook-operations') {
    const operationId = id(second);
    return operationId === undefined || operationId > 2_147_483_647
      ? { name: 'not-found' }
      : { name: 'webhook-operation', id: operationId };
  }
  return { name: 'not-found' };
}

/** The navigation section a route belongs to, for `aria-current`. */
export function sectionOf(
  route: Route,
):
  | 'overview'
  | 'webhooks'
  | 'registrations'
  | 'webhook-groups'
  | 'webhook-issues'
  | 'operator-actions'
  | 'event-catalog'
  | undefined {
  switch (route.name) {
    case 'overview':
      return 'overview';
    case 'webhooks':
    case 'webhook':
      return 'webhooks';
    case 'registrations':
    case 'registration':
    case 'registration-new':
    case 'notifications':
      return 'registrations';
    case 'webhook-groups':
      return 'webhook-groups';
    case 'webhook-issues':
      return 'webhook-issues';
    case 'operator-actions':
    case 'webhook-operation':
      return 'operator-actions';
    case 'event-catalog':
      return 'event-catalog';
    default:
      return undefined;
  }
}

/** The document title of a route. */
export function titleOf(route: Route): string {
  switch (route.name) {
    case 'overview':
      return 'Overview';
    case 'webhooks':
      return 'Webhooks';
    case 'webhook':
      return `Webhook ${route.id}`;
    case 'registrations':
      return 'Registrations';
    case 'registration-new':
      return 'New registration';
    case 'registration':
      return `Registration ${route.id}`;
    case 'webhook-groups':
      return 'Webhook groups (blocked)';
    case 'webhook-issues':
      return 'Webhook issues (triage)';
    case 'operator-actions':
      return 'Operator actions (audit trail)';
    case 'webhook-operation':
      return `Webhook operation ${route.id}`;
    case 'event-catalog':
      return 'Event catalog';
    case 'notifications':
      return 'Notifications';
    case 'moved':
      return 'Moved';
    default:
      return 'Not found';
  }
}
