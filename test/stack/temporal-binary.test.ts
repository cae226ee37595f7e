// The order in which a first start looks for the Temporal CLI: what is there already, then a prebuilt download
// (seconds), then a Go build (minutes), and a message that says what to do when none works. The Go toolchain
// here is a script on the PATH that records its call and writes what `go install` would.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { TEMPORAL_CLI_MODULE, findTemporalBinary, type CliDownload } from '../../stack/temporal-binary.ts';

async function sandbox(options: { go: boolean }) {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-cli-'));
  const bin = path.join(root, 'bin');
  await fs.mkdir(bin);
  const calls = path.join(root, 'calls');
  if (options.go) {
    // `go install <module>` with GOBIN set: writes an executable "temporal" there, as the real build does.
    await fs.writeFile(
      path.join(bin, 'go'),
      `#!/bin/sh\necho "go $*" >> "${calls}"\n/bin/mkdir -p "$GOBIN"\nprintf '#!/bin/sh\\necho built\\n' > "$GOBIN/temporal"\n/bin/chmod +x "$GOBIN/temporal"\n`,
      { mode: 0o755 },
    );
  }
  const env = { PATH: bin, HOME: root, BRIGADE_CACHE_DIR: path.join(root, 'cache') };
  const record = async (line: string) => fs.appendFile(calls, `${line}\n`);
  const callsMade = async () => (await fs.readFile(calls, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
  return { root, env, record, callsMade, cached: path.join(root, 'cache', 'bin', 'temporal') };
}

const downloads =
  (record: (line: string) => Promise<void>, works: boolean): CliDownload =>
  async (_binDir, target) => {
    await record('download');
    if (!works) throw new Error('getaddrinfo ENOTFOUND temporal.download');
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, '#!/bin/sh\necho downloaded\n', { mode: 0o755 });
    return target;
  };

test('a download comes before the Go build, and a successful one means no build', async () => {
  const box = await sandbox({ go: true });
  const found = await findTemporalBinary({ env: box.env, download: downloads(box.record, true) });
  assert.equal(found, box.cached);
  assert.deepEqual(await box.callsMade(), ['download'], 'Go was never called');
  // The next start finds the cached file and neither downloads nor builds.
  assert.equal(await findTemporalBinary({ env: box.env, download: downloads(box.record, true) }), box.cached);
  assert.deepEqual(await box.callsMade(), ['download']);
});

test('without a network the download fails and the Go build runs next', async () => {
  const box = await sandbox({ go: true });
  const found = await findTemporalBinary({ env: box.env, download: downloads(box.record, false) });
  assert.equal(found, box.cached);
  assert.deepEqual(await box.callsMade(), ['download', `go install ${TEMPORAL_CLI_MODULE}`]);
});

test('with neither a network nor Go, the message lists what was tried in order and what to do', async () => {
  const box = await sandbox({ go: false });
  await assert.rejects(findTemporalBinary({ env: box.env, download: downloads(box.record, false) }), (error: Error) => {
    const tried = error.message.split('\n').filter((line) => line.startsWith('  - '));
    assert.match(tried[0]!, /TEMPORAL_CLI_PATH/);
    assert.match(tried[1]!, /on the PATH/);
    assert.match(tried[2]!, /absent/);
    assert.match(tried[3]!, /downloading .*ENOTFOUND/);
    assert.match(tried[4]!, /Go .*not on the PATH/);
    assert.match(error.message, /TEMPORAL_ADDRESS/, 'says how to do without a local CLI');
    return true;
  });
});

test('the CLI on the PATH wins over the cache and any download', async () => {
  const box = await sandbox({ go: true });
  const onPath = path.join(box.env.PATH, 'temporal');
  await fs.writeFile(onPath, '#!/bin/sh\n', { mode: 0o755 });
  assert.equal(await findTemporalBinary({ env: box.env, download: downloads(box.record, true) }), onPath);
  assert.deepEqual(await box.callsMade(), []);
});
