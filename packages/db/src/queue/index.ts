export * from './claim';
export * from './complete';
export * from './enqueue';
export * from './release';
export * from './prune';
export * from './queue-stats';
export * from './repair';
