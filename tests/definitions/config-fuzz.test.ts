// Config fuzzing (issue 10): 1200 seeded train-CLI argv cases — presets, shortcut flags, `--set`
// edits valid and invalid, typos, impossible sizes — through the CLI's parser and the validation
// shared by the CLI and the page (fields, then resources), all before any GPU work. Every refused
// case names a flag or a config field (one its edits may be blamed on); nothing else throws; the
// outcomes are the same for the same seed. The GPU part (config-fuzz-train.test.ts) trains small
// valid ones.
import { describe, expect, it } from 'vitest';

import { type FuzzCase, fuzzCases, type FuzzOutcome, runFuzzCase, SWIFTSHADER_LIKE } from './config-fuzz-cases';

const SEED = 20261123;
const COUNT = 1200;

/** A config path that exists in the schema (a section's field, or a section itself such as model.nsa). */
const FIELD = /^(model|train|data)(\.[A-Za-z][A-Za-z0-9]*){1,2}$/;

function summary(o: FuzzOutcome): string {
  return o.kind === 'valid' ? 'valid' : o.kind === 'usage' ? `usage:${o.flag ?? '-'}` : `config:${o.fields.join(',')}`;
}

describe(`config fuzz: ${COUNT} seeded cases, before any GPU work`, () => {
  const cases = fuzzCases(SEED, COUNT);
  const outcomes = new Map<FuzzCase, FuzzOutcome>();

  it('0 crashes: every case parses and validates to usage error, config issues or a valid config', () => {
    const t0 = performance.now();
    for (const c of cases) outcomes.set(c, runFuzzCase(c)); // throws (fails) on anything but a user error
    const ms = performance.now() - t0;
    const kinds = { usage: 0, config: 0, valid: 0 };
    for (const o of outcomes.values()) kinds[o.kind]++;
    console.log(
      `[fuzz] ${COUNT} cases in ${ms.toFixed(0)} ms: ${kinds.usage} usage errors, ${kinds.config} config refusals, ${kinds.valid} valid`,
    );
    // Both sides are exercised.
    expect(kinds.valid).toBeGreaterThan(COUNT / 5);
    expect(kinds.usage + kinds.config).toBeGreaterThan(COUNT / 5);
    expect(ms / COUNT).toBeLessThan(50); // no case hangs
  });

  it('valid edits are accepted; every certainly-invalid case is refused, naming a flag or a field its edits may be blamed on', () => {
    const wrong: string[] = [];
    for (const c of cases) {
      const o = outcomes.get(c) ?? runFuzzCase(c);
      if (c.validity === 'ok' && o.kind !== 'valid') wrong.push(`${c.argv.join(' ')} → refused: ${o.message}`);
      if (c.validity !== 'bad' && o.kind === 'valid') continue;
      if (c.validity === 'bad' && o.kind === 'valid') {
        wrong.push(`${c.argv.join(' ')} → accepted`);
        continue;
      }
      if (o.kind === 'usage') {
        expect(o.message.length).toBeGreaterThan(0);
        if (c.names.length && !(o.flag && c.names.includes(o.flag)))
          wrong.push(`${c.argv.join(' ')} → usage error on --${o.flag}: ${o.message}`);
      } else if (o.kind === 'config') {
        for (const f of o.fields) if (!FIELD.test(f)) wrong.push(`${c.argv.join(' ')} → issue on '${f}', not a config field`);
        if (c.names.length && !o.fields.some((f) => c.names.includes(f)))
          wrong.push(`${c.argv.join(' ')} → fields ${o.fields.join(', ')}: ${o.message}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no edit reaches Object.prototype', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('deterministic by seed: same seed, same cases and outcomes; another seed, other cases', () => {
    const again = fuzzCases(SEED, COUNT);
    expect(again.map((c) => c.argv)).toEqual(cases.map((c) => c.argv));
    expect(again.slice(0, 300).map((c) => summary(runFuzzCase(c)))).toEqual(cases.slice(0, 300).map((c) => summary(outcomes.get(c)!)));
    expect(fuzzCases(SEED + 1, 50).map((c) => c.argv)).not.toEqual(cases.slice(0, 50).map((c) => c.argv));
  });

  it("against a SwiftShader-like adapter's limits, the valid cases stay valid or are refused naming a field", () => {
    let refused = 0;
    for (const [c, o] of outcomes) {
      if (o.kind !== 'valid') continue;
      const s = runFuzzCase(c, SWIFTSHADER_LIKE);
      if (s.kind === 'config') {
        refused++;
        for (const f of s.fields) expect(f).toMatch(FIELD);
      } else expect(s.kind).toBe('valid');
    }
    expect(refused).toBeLessThan(COUNT / 10);
  });
});
