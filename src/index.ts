// Public API of nsa-playground: the standalone NSA op (host arrays or GPU-resident slices), its
// config and validation, block arithmetic, and GPU acquisition in Node (Dawn) and the browser.
// Browser bundles should import src/browser.ts (the same without the Node device).
export * from './browser';
export type { AdapterAttempt, NoAdapterDetails, NodeGpuOptions } from './gpu/node-device';
export { acquireNodeGpu, NoAdapterError } from './gpu/node-device';
