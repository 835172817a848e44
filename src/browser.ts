// Public API of nsa-playground for bundlers targeting the browser: everything in src/index.ts
// except the Node device (which imports node:fs and the Dawn `webgpu` package).
export type { ConfigIssue } from './definitions/config-issue';
export { formatConfigIssues, InvalidConfigError } from './definitions/config-issue';
export { forcedBlocks, numCmpBlocks, numSelBlocks, numSelCandidates, visibleCmpBlocks } from './definitions/nsa-blocks';
export type { NsaConfig, NsaPhi, NsaShape } from './definitions/nsa-config';
export { PAPER_NSA_CONFIG, validateNsaConfig } from './definitions/nsa-config';
export { selectionRanges } from './definitions/nsa-ranges';
export type { AttentionShape } from './definitions/shapes';
export type { Arena, ArenaEntry, BufferSlice } from './gpu/arena';
export { createArena } from './gpu/arena';
export type { WebGpuUnavailableReason } from './gpu/browser-device';
export { acquireBrowserGpu, WebGpuUnavailableError } from './gpu/browser-device';
export type { AdapterSummary, Dispatch, GpuReport } from './gpu/context';
export { describeAdapter, GpuContext } from './gpu/context';
export type { NsaOpForward, NsaOpGrads, NsaOpInputs, NsaOpTensors } from './model/nsa/op';
export { NsaOp } from './model/nsa/op';
export type { NsaOpBindArgs, NsaOpBinding, NsaOpGradSlices, NsaOpInputSlices } from './model/nsa/op-bind';
export { assertNsaOp, bindNsaOp, NsaOpConfigError, nsaOpTensorSizes, validateNsaOp } from './model/nsa/op-bind';
