// The Node runtime the project runs on: which one (`nodeRuntime` in package.json: version, the npm
// package that ships its binary, the tarball's integrity) and how scripts/bootstrap.mjs gets it
// when the machine's Node is older: from the npm registry (through `npm pack`, which checks the
// registry's integrity), checked again against the integrity pinned here, unpacked into
// .data/node/<version>/bin/node. Plain JavaScript that runs on old Node versions too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** `{ version, package, integrity }` of the pinned runtime, from the root package.json. */
export function pinnedRuntime(root) {
  const { nodeRuntime } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return nodeRuntime;
}

/** Whether version `current` ("20.20.2" or "v20.20.2") comes before `wanted`. */
export function olderThan(current, wanted) {
  const parts = (version) => version.replace(/^v/, '').split('.').map(Number);
  const [a, b] = [parts(current), parts(wanted)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** Where the runtime of `version` is cached: `<root>/.data/node/<version>`. */
export function runtimeDir(root, version) {
  return join(root, '.data', 'node', version);
}

/** Throws unless the file's digest is the Subresource Integrity string `integrity` ("sha512-…"). */
export function verifyIntegrity(file, integrity) {
  const dash = integrity.indexOf('-');
  const [algorithm, expected] = [integrity.slice(0, dash), integrity.slice(dash + 1)];
  const actual = createHash(algorithm).update(readFileSync(file)).digest('base64');
  if (actual !== expected) {
    throw new Error(`${file} is ${algorithm}-${actual}, not the pinned ${integrity}: refusing to run it`);
  }
}

function run(command, args, options) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status}`;
    throw new Error(`${command} ${args.join(' ')} failed (${why})\n${result.stderr ?? ''}`);
  }
  return result.stdout;
}

/**
 * The path of the pinned Node binary, fetched first when it is not cached yet. Two bootstraps
 * fetching at once each unpack into their own folder; the first rename wins.
 */
export function ensureNode(root, pin, log = (line) => console.error(line)) {
  const dir = runtimeDir(root, pin.version);
  const node = join(dir, 'bin', 'node');
  if (existsSync(node)) return node;
  const platform = `${process.platform}-${process.arch}`;
  if (`node-${platform}` !== pin.package) {
    throw new Error(
      `this project runs on Node ${pin.version}; it fetches it only for ${pin.package.replace('node-', '')}, ` +
        `not ${platform}: install Node ${pin.version} or newer yourself`,
    );
  }
  log(`Fetching Node ${pin.version} (${pin.package} from the npm registry) into ${dir}…`);
  mkdirSync(join(dir, '..'), { recursive: true });
  const work = mkdtempSync(join(dir, '..', `.fetch-${pin.version}-`));
  try {
    const packed = JSON.parse(
      run('npm', ['pack', `${pin.package}@${pin.version}`, '--json', '--pack-destination', work], {
        cwd: work,
      }),
    );
    const tarball = join(work, packed[0].filename);
    verifyIntegrity(tarball, pin.integrity);
    const unpacked = join(work, 'runtime');
    mkdirSync(unpacked);
    run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1', 'package/bin/node']);
    const version = run(join(unpacked, 'bin', 'node'), ['--version']).trim();
    if (version !== `v${pin.version}`) throw new Error(`${pin.package}@${pin.version} holds Node ${version}`);
    try {
      renameSync(unpacked, dir);
    } catch (error) {
      if (!existsSync(node)) throw error; // else another bootstrap got there first
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return node;
}
