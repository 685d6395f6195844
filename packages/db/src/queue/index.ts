export * from './claim';
export * from './complete';
export * from './enqueue';
export * from './release';
