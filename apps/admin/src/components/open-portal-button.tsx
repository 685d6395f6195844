import type { WebhookPortalSessionCreated, WebhookPortalSessionWrite } from '@platform/shared';
import { useMutation } from '@tanstack/react-query';
import { api } from '../lib/api';
import { errorMessage } from '../lib/api-client';
import { Button } from './ui/button';

/** POST /api/webhook-portal/sessions: a portal session, its token and its page (docs/portal.md). */
export function openPortalSession(request: WebhookPortalSessionWrite) {
  return api.request<WebhookPortalSessionCreated>('/api/webhook-portal/sessions', {
    method: 'POST',
    json: request,
  });
}

/** Opens a portal session. */
export function useOpenPortalSession() {
  return useMutation({ mutationFn: openPortalSession });
}

/**
 * Opens, in a new tab, the endpoint portal of a party as its customer would see it: a read-only
 * session of one hour (docs/portal.md), audited as `portal-session.create`.
 */
export function OpenPortalButton({ partyId }: { partyId: number }) {
  const open = useOpenPortalSession();
  const start = () => {
    // the tab opens on the click (a popup blocker lets that through), the address follows
    const tab = window.open('about:blank', '_blank');
    open.mutate(
      { partyId, actions: [], expiresIn: '1h', allowedOrigins: [] },
      {
        onSuccess: (session) => {
          if (tab) tab.location.href = session.url;
          else window.location.assign(session.url);
        },
        onError: () => tab?.close(),
      },
    );
  };
  return (
    <>
      <Button onClick={start} busy={open.isPending} data-testid="open-portal">
        Open customer portal
      </Button>
      {open.error && <span role="alert"> {errorMessage(open.error)}</span>}
    </>
  );
}
