// Public API of nsa-playground for bundlers targeting the browser: everything in src/index.ts
// except the Node device (which imports node:fs and the Dawn `webgpu` package).
export { NsaOp } from './model/nsa/op';
export type { NsaOpForward, NsaOpGrads, NsaOpInputs, NsaOpTensors } from './model/nsa/op';
export { NsaOpConfigError, assertNsaOp, bindNsaOp, nsaOpTensorSizes, validateNsaOp } from './model/nsa/op-bind';
export type { NsaOpBindArgs, NsaOpBinding, NsaOpGradSlices, NsaOpInputSlices } from './model/nsa/op-bind';
export type { AttentionShape } from './spec/shapes';
export { PAPER_NSA_CONFIG, validateNsaConfig } from './spec/nsa-config';
export type { NsaConfig, NsaPhi, NsaShape } from './spec/nsa-config';
export { InvalidConfigError, formatConfigIssues } from './spec/config-issue';
export type { ConfigIssue } from './spec/config-issue';
export { forcedBlocks, numCmpBlocks, numSelBlocks, numSelCandidates, visibleCmpBlocks } from './spec/nsa-blocks';
export { selectionRanges } from './spec/nsa-ranges';
export { GpuContext, describeAdapter } from './gpu/context';
export type { AdapterSummary, Dispatch, GpuReport } from './gpu/context';
export { createArena } from './gpu/arena';
export type { Arena, ArenaEntry, BufferSlice } from './gpu/arena';
export { acquireBrowserGpu, WebGpuUnavailableError } from './gpu/browser-device';
export type { WebGpuUnavailableReason } from './gpu/browser-device';
