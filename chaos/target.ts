import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How a path of the chaos target answers. */
export const BEHAVIOURS = {
  /** 200 after a few milliseconds. */
  ok: { fail: 0, hang: 0, reset: 0 },
  /** 500 for one request in five. */
  flaky: { fail: 0.2, hang: 0, reset: 0 },
  /** Never answers one request in ten (the dispatcher's timeout ends it). */
  hang: { fail: 0, hang: 0.1, reset: 0 },
  /** Drops the connection without answering one request in ten. */
  reset: { fail: 0, hang: 0, reset: 0.1 },
} as const;

export type Behaviour = keyof typeof BEHAVIOURS;

/** One request the target received, with what it answered. */
export interface Delivery {
  webhookId: number;
  behaviour: Behaviour;
  /** The changed entity's id and its per-entity sequence number, from the body. */
  entityId: number;
  seq: number;
  receivedAt: number;
  /** 200 or 500; null when the target hung or reset instead. */
  status: number | null;
}

export interface ChaosTarget {
  url(behaviour: Behaviour): string;
  readonly deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A recording webhook target on 127.0.0.1: `/<behaviour>` answers as BEHAVIOURS says and every
 * request is recorded with the entity and sequence number its body carries, so the suite can
 * count losses, duplicates and ordering violations as a receiver sees them.
 */
export async function startChaosTarget(random: () => number): Promise<ChaosTarget> {
  const deliveries: Delivery[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const behaviour = (request.url ?? '').slice(1) as Behaviour;
      const odds = BEHAVIOURS[behaviour];
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { entity: { id: number; seq: number } };
      const roll = random();
      const status =
        roll < odds.hang ? 'hang' : roll < odds.hang + odds.reset ? 'reset' : roll < odds.fail ? 500 : 200;
      deliveries.push({
        webhookId: Number(request.headers['webhook-id']),
        behaviour,
        entityId: body.entity.id,
        seq: body.entity.seq,
        receivedAt: Date.now(),
        status: typeof status === 'number' ? status : null,
      });
      if (status === 'reset') {
        request.socket.destroy();
      } else if (status === 'hang') {
        // past the dispatcher's timeout; then let go of the socket
        setTimeout(() => request.socket.destroy(), 5_000).unref();
      } else {
        setTimeout(() => response.writeHead(status).end(), 2 + random() * 8);
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (behaviour) => `http://127.0.0.1:${port}/${behaviour}`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
