// Run controls' pure parts: ETA and durations, keyboard shortcut scoping, and the watchdog.
import { describe, expect, it } from 'vitest';

import type { Heartbeat, StepMetrics } from '../../src/train/types';
import { checkStall, heartbeatAge, parseWatchdogSeconds } from '../../src/ui/heartbeat/watchdog';
import { type KeyLike, shortcutAction } from '../../src/ui/run/shortcuts';
import { etaMs, formatDuration, recentStepMs } from '../../src/ui/run/timing';

const m = (step: number, stepMs: number): StepMetrics => ({ step, loss: 1, lr: 1, gradNorm: 1, tokensPerSecond: 1, stepMs, elapsedMs: 0 });

describe('timing', () => {
  it('ETA = remaining steps × the mean of the last 20 step times', () => {
    const metrics = [...Array.from({ length: 10 }, (_, i) => m(i, 1000)), ...Array.from({ length: 20 }, (_, i) => m(10 + i, 100))];
    expect(recentStepMs(metrics)).toBe(100);
    expect(etaMs(metrics, 30, 130)).toBe(10_000);
    expect(etaMs(metrics, 130, 130)).toBeNull();
    expect(etaMs([], 0, 10)).toBeNull();
  });

  it('formats durations as m:ss and h:mm:ss', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(7_400)).toBe('0:07');
    expect(formatDuration(205_000)).toBe('3:25');
    expect(formatDuration(3_729_000)).toBe('1:02:09');
    expect(formatDuration(null)).toBe('–');
    expect(formatDuration(NaN)).toBe('–');
  });
});

describe('shortcuts', () => {
  const key = (k: string, tagName = 'BODY', extra: Partial<KeyLike> = {}): KeyLike => ({
    key: k,
    altKey: false,
    ctrlKey: false,
    metaKey: false,
    repeat: false,
    target: { tagName, getAttribute: () => null },
    ...extra,
  });

  it('Space, S and R map to run/pause, step and reset on the page and inside the stepper', () => {
    expect(shortcutAction(key(' '))).toBe('toggle');
    expect(shortcutAction(key('s'))).toBe('step');
    expect(shortcutAction(key('S'))).toBe('step');
    expect(shortcutAction(key('r'))).toBe('reset');
    expect(shortcutAction(key(' ', 'SECTION'))).toBe('toggle');
  });

  it('never while typing, with modifiers or auto-repeat; Space is left to focused buttons; arrows are not taken', () => {
    for (const tag of ['INPUT', 'TEXTAREA', 'SELECT']) for (const k of [' ', 's', 'r']) expect(shortcutAction(key(k, tag))).toBeNull();
    expect(shortcutAction(key('s', 'DIV', { target: { tagName: 'DIV', isContentEditable: true } }))).toBeNull();
    expect(shortcutAction(key(' ', 'BUTTON'))).toBeNull();
    expect(shortcutAction(key('s', 'BUTTON'))).toBe('step');
    expect(
      shortcutAction(key(' ', 'DIV', { target: { tagName: 'DIV', getAttribute: (n) => (n === 'role' ? 'slider' : null) } })),
    ).toBeNull();
    expect(shortcutAction(key('r', 'BODY', { ctrlKey: true }))).toBeNull();
    expect(shortcutAction(key('s', 'BODY', { repeat: true }))).toBeNull();
    for (const k of ['ArrowRight', 'ArrowLeft', 'Home', 'End', '[', ']']) expect(shortcutAction(key(k))).toBeNull();
  });
});

describe('watchdog', () => {
  const beat = (ts: number, phase: Heartbeat['phase'] = 'step'): Heartbeat => ({
    ts,
    iso: '',
    step: 5,
    msg: '',
    phase,
    loss: null,
    toks_per_s: null,
    lr: null,
    grad_norm: null,
    gpu_mem_bytes: 0,
  });

  it('stalls after the timeout without a beat, naming the last phase and step', () => {
    const w = { now: 100_000, active: true, heartbeat: beat(89_000, 'eval'), since: 50_000, timeoutSeconds: 10 };
    expect(checkStall(w)).toEqual({ ageSeconds: 11, timeoutSeconds: 10, phase: 'eval', step: 5 });
    expect(checkStall({ ...w, heartbeat: beat(91_000) })).toBeNull();
  });

  it('is off when not training, and counts from the start of a resumed call', () => {
    const w = { now: 100_000, active: true, heartbeat: beat(10_000, 'paused'), since: 95_000, timeoutSeconds: 10 };
    expect(checkStall(w)).toBeNull(); // the old beat is from before the pause
    expect(checkStall({ ...w, now: 106_000 })?.ageSeconds).toBe(11);
    expect(checkStall({ ...w, active: false, now: 1e9 })).toBeNull();
    expect(checkStall({ ...w, heartbeat: null, now: 106_000 })?.phase).toBe('starting');
  });

  it('parses the timeout field and ages beats', () => {
    expect(parseWatchdogSeconds('30')).toBe(30);
    for (const bad of ['', '1', 'x', '1e9', '-5']) expect(parseWatchdogSeconds(bad)).toBeNull();
    expect(heartbeatAge(null, 5)).toBeNull();
    expect(heartbeatAge(beat(1000), 3500)).toBe(2.5);
  });
});
