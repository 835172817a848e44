// The PyTorch model (python/nsa_playground/model.py with attention 'dsa') trains as the float64 twin
// (src/reference/model.ts) and the WebGPU trainer's optimizer rules (docs/dsa-spec.md section 11):
// an exported tiny DSA model (fresh weights, zero moments), four optimizer steps of two micro-batches
// each — two of the dense warm-up, two sparse — then the loss of a fifth step's. Per step: the
// cross-entropy and Σ L_I (the micro-batches' means), the logits and every layer's selection of the
// step's first micro-batch, every parameter's gradient; after the last update every parameter. The twin's AdamW (src/reference/adamw.ts, gradient clip gradNormRef) updates
// only the indexers in the warm-up (dsaUpdates) and corrects the bias at the run's step, so the main
// parameters' first update (step 3) divides by 1 − β^3. PyTorch runs in float64 (Debian's torch 1.13,
// one process): losses |Δ| ≤ 1e-5 relative, logits, gradients and parameters rel RMS ≤ 1e-5 (the
// tensors come back as float32: ~1e-8 of rounding), selections equal, the warm-up's gradients exactly 0
// outside the indexers. Weight decay 0.5: a frozen parameter decayed (or its moments moved) in the
// warm-up would put the parameters ~1e-4 apart.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { DsaConfig } from '../../src/definitions/dsa-config';
import { dsaPhaseAt, dsaUpdates } from '../../src/definitions/dsa-params';
import { adamwHyper } from '../../src/definitions/optimizer';
import { numel, paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { adamwRef } from '../../src/reference/adamw';
import { gradNormRef } from '../../src/reference/gradnorm';
import { modelBackwardRef, modelForwardRef, type Params64 } from '../../src/reference/model';
import { decodeSafetensors } from '../../src/train/checkpoint/safetensors';
import type { RunConfig } from '../../src/train/config';
import { exportDirectoryFiles } from '../../src/train/export/directory';
import { exportedTensors, fromExported } from '../../src/train/export/hf-names';
import { learningRate } from '../../src/train/lr-schedule';
import { preset } from '../../src/train/presets/presets';
import { runTorch, writeFiles } from '../export/torch-side';
import { relRms, rng } from '../helpers/compare';
import { denseTestModel } from '../helpers/models';

const root = mkdtempSync(join(tmpdir(), 'nsa-dsa-torch-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const B = 2;
const T = 10;
/** Two warm-up steps, then sparse; top-4 of 10 tokens, so the sparse phase really selects. */
const DSA: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 4, warmupSteps: 2, lossWeight: 0.7 };
const UPDATES = 4;
/** Micro-batches per step (the indexer's gradient is the step's mean L_I: λ / (B·T·gradAccum)). */
const ACCUM = 2;
const UNSCORED = 2;
const TOL = 1e-5;

function runConfig(): RunConfig {
  const c = preset('tiny');
  c.model = denseTestModel(T, { attention: 'dsa', dsa: DSA });
  c.data = { source: 'random', tokenizer: 'byte' };
  // Weight decay 0.5 and a clip the gradients exceed: a frozen weight decayed, or a wrong norm, shows at once.
  c.train = { ...c.train, steps: 10, batchSize: B, gradAccum: ACCUM, warmupSteps: 2, weightDecay: 0.5, gradClip: 0.5, evalEvery: 0 };
  return c;
}

interface Step {
  phase: string;
  loss: number;
  indexLoss: number;
  logits: Float64Array;
  sels: Int32Array[];
  grads: Params64;
}

describe('DSA in PyTorch = the float64 twin, warm-up and sparse steps', () => {
  it(
    `4 optimizer steps (2 warm-up, 2 sparse) and a 5th loss: losses, Σ L_I (rel ≤ ${TOL}), logits, gradients, parameters (rel RMS ≤ ${TOL}), selections equal`,
    { timeout: 120_000 },
    () => {
      const config = runConfig();
      const m = config.model;
      const t = config.train;
      const specs = paramSpecs(m);
      const init = initParams(specs, 5);
      const zeros = new Map([...init].map(([k, v]) => [k, new Float32Array(v.length)]));
      const dir = join(root, 'export');
      writeFiles(dir, exportDirectoryFiles({ config, state: { stepsDone: 0, batchesDrawn: 0 }, params: init, adamM: zeros, adamV: zeros }));

      const r = rng(21);
      // Each step ACCUM micro-batches; each sequence's first UNSCORED targets are −1 (a task's fixed
      // count of scored targets per sequence, as the WebGPU trainer's loss scale assumes).
      const batches = Array.from({ length: UPDATES + 1 }, () =>
        Array.from({ length: ACCUM }, () => ({
          tokens: Int32Array.from({ length: B * T }, () => Math.floor(r() * m.vocabSize)),
          targets: Int32Array.from({ length: B * T }, (_, i) => (i % T < UNSCORED ? -1 : Math.floor(r() * m.vocabSize))),
        })),
      );

      // The twin, trained as the WebGPU trainer does.
      const p: Params64 = new Map([...init].map(([k, v]) => [k, Float64Array.from(v)]));
      const adamM: Params64 = new Map(specs.map((s) => [s.name, new Float64Array(numel(s.shape))]));
      const adamV: Params64 = new Map(specs.map((s) => [s.name, new Float64Array(numel(s.shape))]));
      const schedule = {
        lrMax: t.lrMax,
        lrMin: t.lrMin,
        warmupSteps: t.warmupSteps,
        totalSteps: t.steps,
        warmupStartFraction: t.warmupStartFraction,
      };
      const twin: Step[] = [];
      batches.forEach((micro, s) => {
        const phase = dsaPhaseAt(s, DSA);
        // Every micro-batch scores as many targets: the step's losses and gradients are their means.
        const fwds = micro.map((b) => modelForwardRef(m, p, b.tokens, b.targets, B, { dsaPhase: phase }));
        const mean = (f: (x: (typeof fwds)[number]) => number) => fwds.reduce((a, x) => a + f(x), 0) / ACCUM;
        const sels = fwds[0].layers.map((L) => {
          const all = new Int32Array(B * T * m.nKvGroups * DSA.topK);
          L.attnCache.dsa!.seqs.forEach(({ sel }, i) => all.set(sel, i * sel.length));
          return all;
        });
        const step: Step = {
          phase,
          loss: mean((x) => x.loss),
          indexLoss: mean((x) => x.dsa!.indexLoss),
          logits: fwds[0].logits,
          sels,
          grads: new Map(),
        };
        twin.push(step);
        if (s === UPDATES) return;
        step.grads = new Map(specs.map((sp) => [sp.name, new Float64Array(numel(sp.shape))]));
        micro.forEach((b, i) => {
          for (const [name, g] of modelBackwardRef(m, p, b.tokens, b.targets, B, fwds[i])) {
            const sum = step.grads.get(name)!;
            for (let j = 0; j < g.length; j++) sum[j] += g[j] / ACCUM;
          }
        });
        const updated = specs.filter((sp) => dsaUpdates(sp.name, s, DSA));
        const { scale } = gradNormRef(
          updated.map((sp) => step.grads.get(sp.name)!),
          t.gradClip,
        );
        const h = adamwHyper(t, learningRate(schedule, s), s + 1);
        for (const sp of updated)
          adamwRef(p.get(sp.name)!, step.grads.get(sp.name)!, adamM.get(sp.name)!, adamV.get(sp.name)!, h, sp.decay, scale);
      });

      // PyTorch: the parity script over the same five batches, every step's tensors.
      const rows = (a: Int32Array) => Array.from({ length: B }, (_, i) => Array.from(a.subarray(i * T, (i + 1) * T)));
      const batchesJson = join(root, 'batches.json');
      writeFileSync(
        batchesJson,
        JSON.stringify({
          steps: batches.map((micro) => ({ micro: micro.map((b) => ({ tokens: rows(b.tokens), targets: rows(b.targets) })) })),
        }),
      );
      const out = join(root, 'out');
      runTorch(['-m', 'nsa_playground.parity', '--dir', dir, '--batches', batchesJson, '--out', out, '--every-step']);
      const result = JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')) as {
        losses: number[];
        index_losses: number[];
        dsa_phases: string[];
      };
      const tensors = decodeSafetensors(readFileSync(join(out, 'tensors.safetensors')), { file: out, maxBytes: 2 ** 30 }).tensors;
      const get = (name: string) => {
        const x = tensors.get(name);
        expect(x, name).toBeDefined();
        return x!.data;
      };

      expect(result.dsa_phases).toEqual(['warmup', 'warmup', 'sparse', 'sparse', 'sparse']);
      const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);
      const worst = { loss: 0, index: 0, logits: 0, grads: 0 };
      const hf = exportedTensors(m);
      twin.forEach((s, i) => {
        expect(result.dsa_phases[i]).toBe(s.phase);
        worst.loss = Math.max(worst.loss, rel(result.losses[i], s.loss));
        worst.index = Math.max(worst.index, rel(result.index_losses[i], s.indexLoss));
        const suffix = i === 0 ? '' : `@${i}`;
        worst.logits = Math.max(worst.logits, relRms(get(`logits${suffix}`), s.logits));
        s.sels.forEach((sel, l) =>
          expect(Array.from(get(`selection${suffix}.${l}`)), `step ${i} layer ${l} selection`).toEqual(Array.from(sel)),
        );
        if (i === UPDATES) return;
        const ours: number[] = [];
        const theirs: number[] = [];
        for (const x of hf) {
          const g = fromExported(x, get(`grad${suffix}.${x.hf}`));
          if (s.phase === 'warmup' && !x.hf.includes('.indexer.'))
            expect(
              g.every((v) => v === 0),
              `${x.hf}: no gradient in the warm-up`,
            ).toBe(true);
          ours.push(...s.grads.get(x.ours)!);
          theirs.push(...g);
        }
        worst.grads = Math.max(worst.grads, relRms(theirs, ours));
      });
      const after: number[] = [];
      const want: number[] = [];
      for (const x of hf) {
        after.push(...fromExported(x, get(`param.${x.hf}`)));
        want.push(...p.get(x.ours)!);
      }
      const paramErr = relRms(after, want);
      console.log(
        `[dsa torch parity] worst over 5 steps: loss ${worst.loss.toExponential(2)}, Σ L_I ${worst.index.toExponential(2)}, logits ${worst.logits.toExponential(2)}, ` +
          `gradients ${worst.grads.toExponential(2)}; parameters after 4 updates ${paramErr.toExponential(2)}`,
      );
      expect(worst.loss).toBeLessThanOrEqual(TOL);
      expect(worst.index).toBeLessThanOrEqual(TOL);
      expect(worst.logits).toBeLessThanOrEqual(TOL);
      expect(worst.grads).toBeLessThanOrEqual(TOL);
      expect(paramErr).toBeLessThanOrEqual(TOL);
    },
  );
});
