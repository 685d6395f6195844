import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (free now: whoever binds it next gets it). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A URL on 127.0.0.1 where nothing listens (a port that was just free). */
export async function refusingUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/hook`;
}
