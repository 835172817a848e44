// The throttle of dawn.node's polling turns (src/gpu/dawn-poll-throttle.ts): native callbacks go
// through setImmediate for the first SPIN_MS of a wait, then through a POLL_MS timer; JS callbacks
// are never delayed; a quiet gap starts a new wait.
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { isNativeFunction, POLL_MS, SPIN_MS, throttledSetImmediate } from '../src/gpu/dawn-poll-throttle';

function harness() {
  let clock = 0;
  const routed: Array<['immediate'] | ['timer', number]> = [];
  const schedule = throttledSetImmediate(
    () => routed.push(['immediate']),
    (_cb, ms) => routed.push(['timer', ms]),
    () => clock,
  );
  return {
    routed,
    at(t: number, callback: (...args: unknown[]) => void) {
      clock = t;
      schedule(callback);
      return routed[routed.length - 1];
    },
  };
}

// A native function, as dawn.node's turns are (a bound function reports native code too).
const native = function turn() {}.bind(null);
const js = () => {};

describe('dawn.node poll throttle', () => {
  it('tells native functions from JS ones', () => {
    expect(isNativeFunction(native)).toBe(true);
    expect(isNativeFunction(Math.max)).toBe(true);
    expect(isNativeFunction(js)).toBe(false);
    expect(isNativeFunction(function named() {})).toBe(false);
    expect(isNativeFunction('function () { [native code] }')).toBe(false);
  });

  it('keeps a wait immediate for SPIN_MS, then polls every POLL_MS; a gap starts a new wait', () => {
    const h = harness();
    expect(h.at(100, native)).toEqual(['immediate']);
    expect(h.at(100 + SPIN_MS / 2, native)).toEqual(['immediate']);
    expect(h.at(100 + SPIN_MS, native)).toEqual(['immediate']);
    expect(h.at(100 + SPIN_MS + 0.01, native)).toEqual(['timer', POLL_MS]);
    expect(h.at(100 + SPIN_MS + 1, native)).toEqual(['timer', POLL_MS]);
    // The same wait goes on at the timer's pace.
    expect(h.at(100 + SPIN_MS + 2, native)).toEqual(['timer', POLL_MS]);
    // A quiet gap: the next turn belongs to a new wait.
    expect(h.at(200, native)).toEqual(['immediate']);
    expect(h.at(200 + SPIN_MS * 2, native)).toEqual(['timer', POLL_MS]);
  });

  it('never delays a JS callback, even inside a throttled wait', () => {
    const h = harness();
    h.at(0, native);
    expect(h.at(SPIN_MS * 4, native)).toEqual(['timer', POLL_MS]);
    expect(h.at(SPIN_MS * 4, js)).toEqual(['immediate']);
  });

  it('installed globally, keeps setImmediate promisifiable', async () => {
    const { throttleDawnPolling } = await import('../src/gpu/dawn-poll-throttle');
    const original = globalThis.setImmediate;
    try {
      throttleDawnPolling();
      expect(globalThis.setImmediate).not.toBe(original);
      await expect(promisify(setImmediate)('value')).resolves.toBe('value');
      await new Promise<void>((done) => setImmediate(done));
    } finally {
      globalThis.setImmediate = original;
    }
  });
});
