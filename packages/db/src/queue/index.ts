export * from './enqueue';
export * from './release';
