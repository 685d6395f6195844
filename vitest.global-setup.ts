import type { TestProject } from 'vitest/node';
import { setupTestDatabases } from './packages/db/src/testing';

export default async function setup(project: TestProject) {
  return setupTestDatabases(project);
}
