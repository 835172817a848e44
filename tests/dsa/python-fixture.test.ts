// python/tests/fixtures/dsa-twin.json is what the float64 DSA twin computes today (byte for byte),
// so the PyTorch parity test (python/tests/test_dsa_twin.py) checks against the current twin.
// DSA_WRITE_FIXTURE=1 rewrites it.
import { readFileSync, writeFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { DSA_FIXTURE_PATH, dsaFixtureJson } from './python-fixture';

describe('DSA PyTorch fixture', () => {
  it('equals the twin’s output', () => {
    const now = dsaFixtureJson();
    if (process.env.DSA_WRITE_FIXTURE === '1') writeFileSync(DSA_FIXTURE_PATH, now);
    expect(readFileSync(DSA_FIXTURE_PATH, 'utf8') === now, `${DSA_FIXTURE_PATH} is stale: DSA_WRITE_FIXTURE=1 rewrites it`).toBe(true);
  });
});
