import { PartyType } from '@platform/shared';
import { useEffect, useRef, type ReactNode } from 'react';
import { Button } from '../components/ui/button';
import { KeyboardShortcuts } from '../components/ui/keyboard-shortcuts';
import { sessionStore } from '../lib/api';
import { Link, useLocation } from '../lib/router';
import type { Session } from '../lib/session';
import { matchRoute, sectionOf } from './route-table';

const NAVIGATION = [
  { section: 'overview', to: '/', label: 'Overview' },
  { section: 'webhooks', to: '/webhooks', label: 'Webhooks' },
  { section: 'registrations', to: '/registrations', label: 'Registrations' },
  { section: 'webhook-groups', to: '/webhook-groups', label: 'Webhook groups' },
  { section: 'webhook-issues', to: '/webhook-issues', label: 'Webhook issues' },
  { section: 'operator-actions', to: '/operator-actions', label: 'Operator actions' },
  { section: 'event-catalog', to: '/webhook-event-types', label: 'Event catalog' },
] as const;

/** The frame of every signed-in screen: skip link, navigation, who is signed in, sign-out. */
export function Shell({ session, children }: { session: Session; children: ReactNode }) {
  const { path } = useLocation();
  const section = sectionOf(matchRoute(path));
  const mainRef = useRef<HTMLElement>(null);
  const firstPath = useRef(path);

  // after a navigation, focus goes to the new screen, as a full page load would put it
  useEffect(() => {
    if (path === firstPath.current) return;
    firstPath.current = '';
    mainRef.current?.focus();
    window.scrollTo(0, 0);
  }, [path]);

  const { claims } = session;
  const role = claims.partyType === PartyType.Admin ? 'Admin' : 'Property Management Company';
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Webhooks operator console, overview">
          <span className="brand__mark" aria-hidden="true">
            ⇄
          </span>
          Webhooks
        </Link>
        <nav aria-label="Main" className="nav">
          <ul>
            {NAVIGATION.map((item) => (
              <li key={item.section}>
                <Link
                  to={item.to}
                  className="nav__link"
                  aria-current={section === item.section ? 'page' : undefined}
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account" data-testid="signed-in-account">
          <span className="account__who">
            <span className="account__email">{claims.email}</span>
            <span className="account__party">
              {claims.partyName} · {role}
            </span>
          </span>
          <Button size="small" onClick={() => sessionStore.end('signed-out')}>
            Sign out
          </Button>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1} className="main">
        {children}
      </main>
      <KeyboardShortcuts />
    </div>
  );
}
