import { defineConfig } from '@playwright/test';

// Debian's Chromium, never a downloaded browser build (the machine has no route to one).
// Built for a loaded 2-core CI machine: one worker, generous timeouts, waits on conditions
// (expect.poll, web-first assertions) rather than sleeps, and no retries: a flaky test is fixed.
export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  // starts the whole stack on a fresh database and a local webhook target; returns the teardown
  globalSetup: './global-setup.ts',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  timeout: 180_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    // set by the global setup (a free port); the workers inherit it
    baseURL: process.env.E2E_BASE_URL,
    viewport: { width: 1280, height: 800 },
    actionTimeout: 30_000,
    navigationTimeout: 60_000,
    screenshot: 'on',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
