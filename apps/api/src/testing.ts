// Only apps/api/src/security/* still imports the API's test helpers under this name: they live in
// test-support.ts, the one name of test-helper modules. Delete this file once those tests follow.
export * from './test-support';
