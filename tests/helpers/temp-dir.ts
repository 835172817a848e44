// Temporary folders a test file removes when its tests end, so that no run leaves folders in /tmp.
// Call tempFolders at a file's top level (or in a describe), where vitest can register the
// afterAll: the integration and gpu tiers share modules between files (isolate: false), so the
// helper keeps no state of its own between calls.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll } from 'vitest';

/** A folder under os.tmpdir() named `prefix…`, removed after the calling file's tests; the returned
 * function makes a fresh empty sub-folder in it on each call. */
export function tempFolders(prefix: string): (name?: string) => string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let made = 0;
  return (name = 'dir') => {
    const dir = join(root, `${name}-${made++}`);
    mkdirSync(dir);
    return dir;
  };
}
