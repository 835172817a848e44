// Every kernel composition the wrappers in src/kernels build, with every entry point and a
// representative set of override constants per variant (shape-dependent tilings sampled at a few
// head dims): the list tests/kernels/compile-all.test.ts compiles by name. Each wrapper exports
// the kernels it dispatches (defineKernel) and its variants next to them, so this list is the
// wrappers' own.
import type { Kernel, KernelVariant } from '../gpu/kernel-interface';
import { ADAMW_VARIANTS } from './adamw';
import { ATTENTION_VARIANTS } from './attention';
import { CROSSENTROPY_VARIANTS } from './crossentropy';
import { DECODE_VARIANTS } from './decode';
import { DSA_INDEX_BACKWARD_VARIANTS } from './dsa-index-backward';
import { DSA_INDEX_LOSS_VARIANTS } from './dsa-index-loss';
import { DSA_INDEX_SCORES_VARIANTS } from './dsa-index-scores';
import { DSA_TOPK_VARIANTS } from './dsa-topk';
import { EMBEDDING_VARIANTS } from './embedding';
import { GRADNORM_VARIANTS } from './gradnorm';
import { MATMUL_VARIANTS } from './matmul';
import { NSA_ATTENTION_VARIANTS } from './nsa-attention';
import { NSA_COMPRESS_VARIANTS } from './nsa-compress';
import { NSA_GATES_VARIANTS } from './nsa-gates';
import { NSA_REVERSE_INDEX_VARIANTS } from './nsa-reverse-index';
import { NSA_SELECT_VARIANTS } from './nsa-select';
import { NSA_STATS_VARIANTS } from './nsa-stats';
import { REDUCE_VARIANTS } from './reduce';
import { RESIDUAL_VARIANTS } from './residual';
import { RMSNORM_VARIANTS } from './rmsnorm';
import { ROPE_VARIANTS } from './rope';
import { SHORT_CONV_VARIANTS } from './short-conv';
import { SWIGLU_VARIANTS } from './swiglu';

export const KERNEL_VARIANTS: readonly KernelVariant[] = [
  ...ADAMW_VARIANTS,
  ...ATTENTION_VARIANTS,
  ...CROSSENTROPY_VARIANTS,
  ...DECODE_VARIANTS,
  ...DSA_INDEX_BACKWARD_VARIANTS,
  ...DSA_INDEX_LOSS_VARIANTS,
  ...DSA_INDEX_SCORES_VARIANTS,
  ...DSA_TOPK_VARIANTS,
  ...EMBEDDING_VARIANTS,
  ...GRADNORM_VARIANTS,
  ...MATMUL_VARIANTS,
  ...NSA_ATTENTION_VARIANTS,
  ...NSA_COMPRESS_VARIANTS,
  ...NSA_GATES_VARIANTS,
  ...NSA_REVERSE_INDEX_VARIANTS,
  ...NSA_SELECT_VARIANTS,
  ...NSA_STATS_VARIANTS,
  ...REDUCE_VARIANTS,
  ...RESIDUAL_VARIANTS,
  ...RMSNORM_VARIANTS,
  ...ROPE_VARIANTS,
  ...SHORT_CONV_VARIANTS,
  ...SWIGLU_VARIANTS,
];

/** The distinct compositions, by name. */
export const KERNEL_COMPOSITIONS: ReadonlyMap<string, Kernel> = new Map(KERNEL_VARIANTS.map((v) => [v.kernel.name, v.kernel]));

/** `kernel:entryPoint {constants}`: the name a variant is reported by. */
export function variantName(v: KernelVariant): string {
  const c = v.constants && Object.keys(v.constants).length ? ` ${JSON.stringify(v.constants)}` : '';
  return `${v.kernel.name}:${v.entryPoint}${c}`;
}
