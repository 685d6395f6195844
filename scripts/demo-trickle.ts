/**
 * The demo's steady trickle of changes through the real API: signs in as the demo manager, creates
 * a property for this run, then renames it every `intervalMs`, so webhooks flow and the console's
 * charts move. `pnpm start` runs it outside production; `pnpm demo` runs it alone against a running
 * API (API_URL, default http://127.0.0.1:3000; DEMO_PASSWORD).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { DEFAULT_DEMO_PASSWORD, demoEnabled } from './demo-seed';

export interface TrickleOptions {
  apiUrl: string;
  password: string;
  intervalMs?: number;
}

/** Starts the trickle; answers its stop. Failed requests are logged and retried on the next tick. */
export function startTrickle(options: TrickleOptions): () => void {
  let stopped = false;
  let token: string | undefined;
  let propertyId: number | undefined;
  let count = 0;

  const call = async (
    method: string,
    path: string,
    body: unknown,
  ): Promise<{ id: number; accessToken?: string }> => {
    const response = await fetch(`${options.apiUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (response.status === 401) token = undefined; // expired: sign in again on the next tick
    if (!response.ok)
      throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { id: number; accessToken?: string };
  };

  const tick = async () => {
    if (!token) {
      const login = { email: 'manager@example.com', password: options.password };
      token = (await call('POST', '/api/auth/login', login)).accessToken;
    }
    const stamp = new Date().toISOString().slice(0, 19).replace('T', ' ');
    if (propertyId === undefined) {
      const property = {
        name: `Demo House ${stamp}`,
        street: 'Demo Street',
        houseNumber: '1',
        postalCode: '10969',
        city: 'Berlin',
      };
      propertyId = (await call('POST', '/api/properties', property)).id;
    } else {
      await call('PATCH', `/api/properties/${propertyId}`, {
        name: `Demo House ${stamp} (change ${++count})`,
      });
    }
  };

  void (async () => {
    let lastError = '';
    while (!stopped) {
      try {
        await tick();
        lastError = '';
      } catch (error) {
        // a change in flight when the stack stops meets the API going away: not worth a line
        if (stopped) break;
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastError) console.error(`[demo] ${message}`);
        lastError = message;
      }
      await sleep(options.intervalMs ?? 1000);
    }
  })();
  return () => {
    stopped = true;
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!demoEnabled(process.env)) {
    console.error('The demo does not run with NODE_ENV=production (or DEMO=false).');
    process.exit(2);
  }
  const apiUrl = process.env.API_URL || 'http://127.0.0.1:3000';
  console.log(`[demo] writing a change a second through ${apiUrl} as manager@example.com; stop with Ctrl-C`);
  startTrickle({ apiUrl, password: process.env.DEMO_PASSWORD || DEFAULT_DEMO_PASSWORD });
}
