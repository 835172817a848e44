// A run taken to PyTorch from the page, and back: the exported directory of `npm run export`
// (config.json, model.safetensors, optimizer.safetensors: src/train/export) as one zip file
// (`<run>-pytorch.zip` holding `<run>/…`, which `NsaLlamaForCausalLM.from_pretrained('<run>')`
// loads once unzipped), and such a zip read back into a training checkpoint. fflate does the zip.
import { unzipSync, zipSync } from 'fflate';

import { CheckpointFormatError, decodeCheckpoint, encodeCheckpoint } from '../../train/checkpoint/checkpoint';
import { CONFIG_FILE, MODEL_FILE, OPTIMIZER_FILE } from '../../train/export/config-json';
import { exportDirectoryFiles, importDirectoryFiles } from '../../train/export/directory';

/** A file name stem safe on every system: letters, digits, '.', '_' and '-'. */
export function safeStem(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'run';
}

/** The zip of a stored checkpoint's exported directory. */
export function pytorchZip(checkpoint: Uint8Array, runName: string): { name: string; bytes: Uint8Array } {
  const stem = safeStem(runName);
  const c = decodeCheckpoint(checkpoint, { file: `${stem} (library checkpoint)` });
  const files = exportDirectoryFiles(c);
  // Safetensors data barely compresses; level 1 keeps large models quick to zip.
  const bytes = zipSync(Object.fromEntries(files.map((f) => [`${stem}/${f.name}`, f.bytes])), { level: 1 });
  return { name: `${stem}-pytorch.zip`, bytes };
}

/**
 * The training checkpoint (the library's format) of a zip made by pytorchZip, by `npm run export`
 * zipped by hand, or by `python -m nsa_playground.train` zipped: one folder (or the zip's root)
 * holding config.json, model.safetensors and optimizer.safetensors. Throws CheckpointFormatError
 * naming the zip and the file or field at fault.
 */
export function checkpointFromPytorchZip(zip: Uint8Array, file: string, savedAt: Date = new Date()): Uint8Array {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(zip);
  } catch (e) {
    throw new CheckpointFormatError(file, '(file)', `is not a readable zip (${(e as Error).message})`);
  }
  const configs = Object.keys(entries).filter((p) => p === CONFIG_FILE || p.endsWith(`/${CONFIG_FILE}`));
  if (configs.length !== 1)
    throw new CheckpointFormatError(
      file,
      CONFIG_FILE,
      configs.length
        ? `found ${configs.length} (${configs.join(', ')}); the zip must hold one exported model`
        : 'missing: not an exported model (npm run export)',
    );
  const dir = configs[0].slice(0, -CONFIG_FILE.length);
  const need = (name: string) => {
    const bytes = entries[dir + name];
    if (!bytes) throw new CheckpointFormatError(file, dir + name, 'missing from the zip');
    return bytes;
  };
  const c = importDirectoryFiles(
    { dir: `${file}:${dir || '.'}`, config: need(CONFIG_FILE), model: need(MODEL_FILE), optimizer: need(OPTIMIZER_FILE) },
    { savedAt },
  );
  return encodeCheckpoint(c);
}
