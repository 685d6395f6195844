import { afterAll, beforeAll, it } from 'vitest';
import { buildWorld, startTestApi, type TestApi, type World } from '../testing';
import { rawClient } from './raw-http';

let api: TestApi; let world: World; let client: ReturnType<typeof rawClient>;
beforeAll(async () => { api = await startTestApi(); world = await buildWorld(api); client = rawClient(api.url, { maxSockets: 25 }); });
afterAll(async () => { client.close(); await api.close(); });

it('debug', async () => {
  const auth = `Bearer ${world.pmc.full.token}`;
  const big = Buffer.from(JSON.stringify('€'.repeat(366667)));
  const mid = Buffer.from(JSON.stringify('x'.repeat(200000)));
  const normal = Buffer.from('{"ids":[1,2]}');
  const spaces = Buffer.concat([Buffer.alloc(2 * 1024 * 1024, 0x20), Buffer.from('{}')]);
  for (const [label, path, headers, body] of [
    ['413 spaces', '/api/properties/batch', { authorization: auth, 'content-type': 'application/json' }, spaces],
    ['401 spaces', '/api/properties/batch', { 'content-type': 'application/json' }, spaces],
    ['415 spaces', '/api/properties/batch', { authorization: auth, 'content-type': 'text/plain' }, spaces],
    ['no-body route spaces', '/api/accounts/1/activation-message', { authorization: auth, 'content-type': 'application/json' }, spaces],
    ['deflate', '/api/properties/batch', { authorization: auth, 'content-type': 'application/json', 'content-encoding': 'deflate' }, mid],
    ['br', '/api/properties/batch', { authorization: auth, 'content-type': 'application/json', 'content-encoding': 'br' }, mid],
] as const) {
    const t0 = performance.now();
    const results = await Promise.all([
      client.send({ method: 'POST', path, headers: { ...headers }, body }).then(r => [label, r.status, Math.round(r.ms)], e => [label, String(e), Math.round(performance.now()-t0)]),
      ...Array.from({ length: 3 }, (_, i) => client.send({ method: 'POST', path: '/api/properties/batch', headers: { authorization: auth, 'content-type': 'application/json' }, body: normal }).then(r => [i, r.status, Math.round(r.ms)], e => [i, String(e), Math.round(performance.now()-t0)])),
    ]);
    const after = await Promise.all(Array.from({ length: 30 }, (_, i) => client.send({ method: 'POST', path: '/api/properties/batch', headers: { authorization: auth, 'content-type': 'application/json' }, body: normal }).then(r => r.status, e => String(e))));
    console.log(JSON.stringify(results), JSON.stringify(after.filter(x => x !== 200)));
  }
}, 60000);
