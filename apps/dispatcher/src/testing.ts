// Only apps/api/src/security/secrets.test.ts still imports the dispatcher's helpers from here: they
// live in @platform/testkit. Delete this file once that test imports the kit.
export * from '@platform/testkit';
