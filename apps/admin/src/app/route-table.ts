/** The console's screens. */
export type Route =
  | { name: 'overview' }
  | { name: 'webhooks' }
  | { name: 'webhook'; id: number }
  | { name: 'registrations' }
  | { name: 'registration-new' }
  | { name: 'registration'; id: number }
  | { name: 'blocked-groups' }
  | { name: 'triage' }
  | { name: 'audit' }
  | { name: 'operation'; id: number }
  | { name: 'not-found' };

const id = (text: string | undefined): number | undefined =>
  text && /^[1-9]\d{0,15}$/.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER ? Number(text) : undefined;

/** The screen of a console path (`/webhooks/42`); trailing slashes do not matter. */
export function matchRoute(path: string): Route {
  const parts = path.split('/').filter(Boolean);
  const [first, second, ...rest] = parts;
  if (rest.length > 0) return { name: 'not-found' };
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
  if (first === 'blocked-groups' && second === undefined) return { name: 'blocked-groups' };
  if (first === 'triage' && second === undefined) return { name: 'triage' };
  if (first === 'audit' && second === undefined) return { name: 'audit' };
  if (first === 'operations') {
    const operationId = id(second);
    return operationId === undefined || operationId > 2_147_483_647
      ? { name: 'not-found' }
      : { name: 'operation', id: operationId };
  }
  return { name: 'not-found' };
}

/** The navigation section a route belongs to, for `aria-current`. */
export function sectionOf(
  route: Route,
): 'overview' | 'webhooks' | 'registrations' | 'blocked-groups' | 'triage' | 'audit' | undefined {
  switch (route.name) {
    case 'overview':
      return 'overview';
    case 'webhooks':
    case 'webhook':
      return 'webhooks';
    case 'registrations':
    case 'registration':
    case 'registration-new':
      return 'registrations';
    case 'blocked-groups':
      return 'blocked-groups';
    case 'triage':
      return 'triage';
    case 'audit':
    case 'operation':
      return 'audit';
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
    case 'blocked-groups':
      return 'Blocked groups';
    case 'triage':
      return 'Triage';
    case 'audit':
      return 'Audit trail';
    case 'operation':
      return `Operation ${route.id}`;
    default:
      return 'Not found';
  }
}
