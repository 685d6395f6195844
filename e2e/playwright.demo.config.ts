import { defineConfig } from '@playwright/test';
import base from './playwright.config';

// The cold-start demo (e2e/demo): each spec starts `pnpm start`'s script itself, on fresh data and
// ports, so no global setup; otherwise the suite's settings (Debian's Chromium, one worker).
export default defineConfig({
  ...base,
  testDir: './demo',
  globalSetup: undefined,
  timeout: 420_000,
  use: { ...base.use, baseURL: undefined },
});
