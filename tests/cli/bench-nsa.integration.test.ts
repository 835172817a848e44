// npm run bench:nsa as a spawned process: a refused flag exits 2 with the message alone, before any
// output (the adapter line comes after the checks that need no adapter). The flag and size logic
// itself is tested in process in tests/cli/bench-nsa.test.ts.
import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

describe('bench:nsa (spawned)', { timeout: 120_000 }, () => {
  it('a refused flag exits 2 with the message alone, before the adapter line', () => {
    for (const [argv, message] of [
      [['--decode', '--T', '70000'], /^--T: 70000 is longer than a model's longest context/],
      [['--train'], /^--train goes with --decode/],
    ] as const) {
      const r = spawnSync(process.execPath, ['scripts/run-node.mjs', 'src/cli/bench-nsa.ts', ...argv], {
        encoding: 'utf8',
        env: { ...process.env, NSA_GPU: 'software' },
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});
