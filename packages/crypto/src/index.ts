// What is cryptography rather than storage, shared by the API, the dispatcher and the scripts: the
// secret box that seals secrets at rest, the service's signing key, and the webhook bearer token
// signed with it.
export * from './secret-box';
export * from './signing-key';
export * from './webhook-token';
