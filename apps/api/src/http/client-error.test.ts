import { sendRawRequest } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../../tests/support/api';

const { api } = useTestApi();

describe('requests Node refuses before the API runs', () => {
  it('a head over 16 KiB gets a 431 ProblemDetails and the connection closes', async () => {
    const answer = await sendRawRequest(
      api.url,
      `GET /api/properties HTTP/1.1\r\nhost: x\r\nx-padding: ${'x'.repeat(17 * 1024)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/problem+json', connection: 'close' });
    expect(JSON.parse(answer.body)).toEqual({
      type: 'https://httpstatuses.io/431',
      title: 'Request header fields too large',
      status: 431,
      detail: 'The request line and headers together exceed 16 KiB',
    });
  });

  it('a request that is not HTTP gets a 400 ProblemDetails', async () => {
    const answer = await sendRawRequest(api.url, 'HELLO\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      status: 400,
      detail: 'The request is not valid HTTP/1.1',
    });
  });

  it('a head under the limit still reaches the API', async () => {
    const answer = await sendRawRequest(
      api.url,
      `GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-padding: ${'x'.repeat(15 * 1024)}\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
  });
});
