/**
 * Test support: what a knex pool says to Postgres, counted at the driver's protocol level (every
 * connection's `pg` Connection), not from knex's query events, so BEGIN, COMMIT and anything a
 * layer sends on its own are counted too.
 */
import type { Knex } from '@platform/db';

/** What the pool sent and Postgres answered between `start()` and `stop()`. */
export interface Traffic {
  /** Statement texts sent (a simple Query or an extended-protocol Parse), in order. */
  sent: string[];
  /** The command tag of every statement Postgres completed (`SELECT 20`, `BEGIN`, …), in order. */
  completed: string[];
  /** Statements that failed (ErrorResponse). */
  errors: number;
  /** Round trips: each ends with exactly one ReadyForQuery. */
  roundTrips: number;
}

interface ProtocolMessage {
  name: string;
  text?: string;
}

interface PgConnection {
  on(event: 'message', listener: (message: ProtocolMessage) => void): void;
  query(text: string): void;
  parse(query: { text: string }): void;
}

interface TarnPool {
  on(
    event: 'createSuccess',
    listener: (eventId: number, resource: { connection: PgConnection }) => void,
  ): void;
  free: { resource: { connection: PgConnection } }[];
  used: { resource: { connection: PgConnection } }[];
}

export interface StatementCounter {
  /** Starts a new count (the previous one is dropped). */
  start(): void;
  /** Ends the count and returns it. */
  stop(): Traffic;
}

/** Counts the traffic of every connection `knex`'s pool holds now or opens later. */
export function countStatements(knex: Knex): StatementCounter {
  let traffic: Traffic | undefined;
  const attached = new WeakSet<PgConnection>();
  const attach = (connection: PgConnection) => {
    if (attached.has(connection)) return;
    attached.add(connection);
    const { query, parse } = connection;
    connection.query = function (text) {
      traffic?.sent.push(text);
      query.call(this, text);
    };
    connection.parse = function (statement) {
      traffic?.sent.push(statement.text);
      parse.call(this, statement);
    };
    connection.on('message', (message) => {
      if (!traffic) return;
      if (message.name === 'readyForQuery') traffic.roundTrips += 1;
      else if (message.name === 'commandComplete') traffic.completed.push(message.text ?? '');
      else if (message.name === 'error') traffic.errors += 1;
    });
  };
  const pool = (knex.client as { pool: TarnPool }).pool;
  for (const { resource } of [...pool.free, ...pool.used]) attach(resource.connection);
  pool.on('createSuccess', (_, resource) => attach(resource.connection));
  return {
    start: () => {
      traffic = { sent: [], completed: [], errors: 0, roundTrips: 0 };
    },
    stop: () => {
      const counted = traffic;
      traffic = undefined;
      if (!counted) throw new Error('countStatements: stop() without start()');
      return counted;
    },
  };
}
