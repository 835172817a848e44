// The GPU decoder of a Node process for npm run generate: Dawn's adapter (src/gpu/node-device.ts),
// a batch-1 GpuDecoder over the checkpoint's weights, and how to release both. Kept out of
// generate-cli.ts so that its --cpu path (and the CPU-only tests of it) never load Dawn.
import { acquireNodeGpu } from '../gpu/node-device';
import { GpuDecoder } from '../model/decode/gpu-decoder';
import type { ModelConfig } from '../spec/model-config';
import { gpuTokenDecoder } from '../train/gpu-token-decoder';
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
