// The dense and NSA attention wrappers reject overlapping slices (every storage binding is
// read_write; the kernels write out/lse, resp. delta and the gradients, and document no in-place
// use) with a KernelArgumentError naming the kernel and the argument, before any GPU work.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import type { BufferSlice } from '../../src/gpu/arena';
import { KernelArgumentError } from '../../src/gpu/checks';
import { attentionBackwardDispatches, attentionForwardDispatch } from '../../src/kernels/attention';
import { nsaBranchBackwardDispatches, nsaBranchForwardDispatch } from '../../src/kernels/nsa-attention';
import { getGpu } from '../helpers/gpu';

const CFG: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const SHAPE: AttentionShape = { B: 1, T: 10, H: 4, G: 2, dk: 8, dv: 8 };
const SLOT = 1 << 14;

/** Disjoint 16 KiB slices of one fake buffer (never bound: validation fails first), by name. */
function slices<N extends string>(names: readonly N[]): Record<N, BufferSlice> {
  const buffer = { label: 'fake' } as unknown as GPUBuffer;
  return Object.fromEntries(names.map((n, i) => [n, { buffer, offset: i * SLOT, size: SLOT }])) as Record<N, BufferSlice>;
}

/** A slice of the same buffer straddling the end of `a` and the start of the next slot. */
const straddling = (a: BufferSlice): BufferSlice => ({ buffer: a.buffer, offset: a.offset + SLOT / 2, size: SLOT });

async function expectArgumentError(p: Promise<unknown>, kernel: string, argument: string, message: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(KernelArgumentError);
  const err = e as KernelArgumentError;
  expect(err.name).toBe('KernelArgumentError');
  expect(err.kernel).toBe(kernel);
  expect(err.argument).toBe(argument);
  expect(err.message).toMatch(message);
  expect(err.message.startsWith(`${kernel}: `)).toBe(true);
}

const FWD = ['q', 'k', 'v', 'out', 'lse'] as const;
const BWD = [...FWD, 'dout', 'delta', 'gradQ', 'gradK', 'gradV'] as const;

describe('dense attention rejects overlapping slices', () => {
  it('forward: an output overlapping an input, k = v, out = lse', async () => {
    const gpu = await getGpu();
    const created = gpu.counters.buffersCreated;
    const s = slices(FWD);
    await expectArgumentError(attentionForwardDispatch(gpu, { ...SHAPE, ...s, out: s.q }), 'attention.forward', 'out', /q and out overlap/);
    await expectArgumentError(attentionForwardDispatch(gpu, { ...SHAPE, ...s, v: s.k }), 'attention.forward', 'v', /k and v overlap/);
    await expectArgumentError(
      attentionForwardDispatch(gpu, { ...SHAPE, ...s, lse: straddling(s.out) }),
      'attention.forward',
      'lse',
      /out and lse overlap/,
    );
    expect(gpu.counters.buffersCreated).toBe(created);
  });

  it('backward: gradients overlapping each other or an input, delta overlapping lse', async () => {
    const gpu = await getGpu();
    const s = slices(BWD);
    const label = 'attention.backward';
    await expectArgumentError(
      attentionBackwardDispatches(gpu, { ...SHAPE, ...s, gradV: s.gradK }),
      label,
      'gradV',
      /gradK and gradV overlap/,
    );
    await expectArgumentError(attentionBackwardDispatches(gpu, { ...SHAPE, ...s, gradQ: s.q }), label, 'gradQ', /q and gradQ overlap/);
    await expectArgumentError(
      attentionBackwardDispatches(gpu, { ...SHAPE, ...s, delta: straddling(s.lse) }),
      label,
      'delta',
      /lse and delta overlap/,
    );
    await expectArgumentError(attentionBackwardDispatches(gpu, { ...SHAPE, ...s, dout: s.out }), label, 'dout', /out and dout overlap/);
  });
});

describe('NSA branch attention rejects overlapping slices', () => {
  it('forward, each branch and both variants: out overlapping q or lse; sel overlapping out', async () => {
    const gpu = await getGpu();
    const created = gpu.counters.buffersCreated;
    for (const variant of ['group', 'simple'] as const) {
      for (const branch of ['cmp', 'sel', 'win'] as const) {
        const s = slices([...FWD, 'sel']);
        const a = { ...SHAPE, cfg: CFG, branch, variant, ...s, sel: branch === 'sel' ? s.sel : undefined };
        const label = `nsa.${branch}.forward`;
        await expectArgumentError(nsaBranchForwardDispatch(gpu, { ...a, out: s.q }), label, 'out', /q and out overlap/);
        await expectArgumentError(nsaBranchForwardDispatch(gpu, { ...a, lse: straddling(s.out) }), label, 'lse', /out and lse overlap/);
        if (branch === 'sel')
          await expectArgumentError(nsaBranchForwardDispatch(gpu, { ...a, sel: s.out }), label, 'sel', /out and sel overlap/);
      }
    }
    expect(gpu.counters.buffersCreated).toBe(created);
  });

  it('backward: gradients overlapping inputs or each other; the reverse index overlapping a gradient', async () => {
    const gpu = await getGpu();
    for (const branch of ['cmp', 'sel', 'win'] as const) {
      const s = slices([...BWD, 'sel', 'counts', 'offsets', 'queries']);
      const reverse = { counts: s.counts, offsets: s.offsets, queries: s.queries };
      const a = {
        ...SHAPE,
        cfg: CFG,
        branch,
        ...s,
        accumulateQ: false,
        sel: branch === 'sel' ? s.sel : undefined,
        reverse: branch === 'sel' ? reverse : undefined,
      };
      const label = `nsa.${branch}.backward`;
      await expectArgumentError(nsaBranchBackwardDispatches(gpu, { ...a, gradQ: s.dout }), label, 'gradQ', /dout and gradQ overlap/);
      await expectArgumentError(
        nsaBranchBackwardDispatches(gpu, { ...a, gradK: straddling(s.gradQ) }),
        label,
        'gradK',
        /gradQ and gradK overlap/,
      );
      await expectArgumentError(nsaBranchBackwardDispatches(gpu, { ...a, delta: s.lse }), label, 'delta', /lse and delta overlap/);
      if (branch === 'sel')
        await expectArgumentError(
          nsaBranchBackwardDispatches(gpu, { ...a, reverse: { ...reverse, queries: s.gradV } }),
          label,
          'reverse.queries',
          /gradV and reverse\.queries overlap/,
        );
    }
  });
});
