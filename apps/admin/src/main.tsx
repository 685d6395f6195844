import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { isPortalPage } from './lib/api';
import { PortalApp } from './portal/portal-app';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    {/* the endpoint portal (docs/portal.md) is this same build, served at /portal/{sessionId} */}
    {isPortalPage ? <PortalApp /> : <App />}
  </StrictMode>,
);
