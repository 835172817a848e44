// The python3 that has torch: Debian's python3-torch lives in /usr/bin/python3, which a pyenv or
// virtualenv python3 earlier on PATH does not see. Falls back to `python3` (the caller then sees
// that torch is missing and says so).
import { spawnSync } from 'node:child_process';

const CANDIDATES = ['python3', '/usr/bin/python3'];

let found: { python: string; hasTorch: boolean } | undefined;

export function pythonWithTorch(): { python: string; hasTorch: boolean } {
  found ??= (() => {
    for (const python of CANDIDATES)
      if (spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0) return { python, hasTorch: true };
    return { python: 'python3', hasTorch: false };
  })();
  return found;
}
