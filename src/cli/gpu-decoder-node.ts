// The GPU decoder of a Node process for npm run generate: Dawn's adapter (src/gpu/node-device.ts),
// a batch-1 GpuDecoder over the checkpoint's weights, and how to release both. Kept out of
// generate-cli.ts so that its --cpu path (and the CPU-only tests of it) never load Dawn.
import { GpuDecoder } from '../decode/gpu-decoder';
import { gpuTokenDecoder } from '../decode/gpu-token-decoder';
import type { ModelConfig } from '../definitions/model-config';
import { acquireNodeGpu } from '../gpu/node-device';
import type { GpuDecoderSource } from './generate-cli';

export const nodeGpuDecoder: GpuDecoderSource = async (model: ModelConfig, values: ReadonlyMap<string, Float32Array>) => {
  const gpu = await acquireNodeGpu({ announce: false });
  try {
    const dec = await GpuDecoder.create(gpu, model);
    dec.loadParams(values);
    return {
      decoder: gpuTokenDecoder(dec),
      release: () => {
        dec.destroy();
        gpu.destroy();
      },
    };
  } catch (e) {
    gpu.destroy();
    throw e;
  }
};
