import { describe, expect, it } from 'vitest';

import { runIdFromSearch, searchWithRun } from '../../src/ui/library/run-link';

describe('run links', () => {
  it('put the run id beside the other parameters and read it back', () => {
    const s = searchWithRun('?log=1&x=time', 'run-1732400000-abc');
    expect(s).toBe('?log=1&x=time&run=run-1732400000-abc');
    expect(runIdFromSearch(s)).toBe('run-1732400000-abc');
    expect(searchWithRun(s, null)).toBe('?log=1&x=time');
    expect(searchWithRun('?run=a', null)).toBe('');
  });

  it('ignore ids that cannot be library ids', () => {
    expect(runIdFromSearch('?run=')).toBeNull();
    expect(runIdFromSearch('?run=%3Cscript%3E')).toBeNull();
    expect(runIdFromSearch('?x=1')).toBeNull();
  });
});
