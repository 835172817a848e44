// npm run export -- runs/<run> --out DIR
// Writes the run's latest checkpoint as a Hugging Face model directory (src/train/export):
// DIR/config.json (every model and NSA field, the tokenizer, the run's train/data settings and step),
// DIR/model.safetensors (Hugging Face Llama names, nn.Linear [out, in] weights),
// DIR/optimizer.safetensors (AdamW's moments), the tokenizer files, README.md (the model card) and,
// for a model Llama cannot express, the custom code. transformers and python/nsa_playground load it;
// npm run train -- --from-export DIR brings it back.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { decodeCheckpoint, type TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import { CHECKPOINT_FILE } from '../train/checkpoint/run-files';
import { CONFIG_FILE, llamaBlockers } from '../train/export/config-json';
import { exportDirectoryFiles } from '../train/export/directory';
import { parseArgs } from './args';
import { readExportDirectory, writeExportDirectory } from './export-dir';
import { runMain } from './main';
import { escapeControl } from './terminal-text';
import { UsageError } from './usage';

const USAGE =
  'usage: npm run export -- runs/<run> --out DIR [--force]   (--force: overwrite a DIR that is not empty; an exported directory in place of runs/<run> is written again in this format)';

function main(): number {
  const args = parseArgs(process.argv.slice(2), { values: ['out'], booleans: ['help', 'force'], positional: 'run folder', usage: USAGE });
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  if (args.positional.length !== 1) throw new UsageError(`export takes one run folder (got ${args.positional.length})\n${USAGE}`);
  const out = args.flags.get('out');
  if (out === undefined) throw new UsageError(`--out DIR is required\n${USAGE}`, { flag: 'out' });
  // An existing export (or anything else) is never overwritten unless asked: checked before the checkpoint is read.
  if (existsSync(out)) {
    if (!statSync(out).isDirectory()) throw new UsageError(`--out ${out} is a file, not a folder`, { flag: 'out', value: out });
    const held = readdirSync(out);
    if (held.length && !args.flags.has('force'))
      throw new UsageError(
        `--out ${out} is not empty (it holds ${held
          .slice(0, 3)
          .map((n) => escapeControl(n))
          .join(', ')}${held.length > 3 ? ', …' : ''}): give an empty or new folder, or --force to overwrite it`,
        { flag: 'out', value: out },
      );
  }
  const t0 = performance.now();
  const source = args.positional[0];
  const file = join(source, CHECKPOINT_FILE);
  let c: TrainingCheckpoint;
  if (!existsSync(file) && existsSync(join(source, CONFIG_FILE))) {
    // An exported directory (an older format's included): written again in this build's format.
    c = readExportDirectory(source, 'export');
  } else {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new UsageError(`cannot read ${file} (${(e as Error).message})`, { value: source });
    }
    c = decodeCheckpoint(bytes, { file });
  }
  const files = exportDirectoryFiles(c);
  const paths = writeExportDirectory(out, files);
  const total = files.reduce((a, f) => a + f.bytes.byteLength, 0);
  for (const [i, p] of paths.entries()) console.log(`[export] ${p} (${files[i].bytes.byteLength} bytes)`);
  console.log(
    `[export] step ${c.state.stepsDone}, ${c.config.model.attention}: ${(total / 2 ** 20).toFixed(2)} MiB in ${(performance.now() - t0).toFixed(0)} ms`,
  );
  const remote = llamaBlockers(c.config.model).length ? ', trust_remote_code=True' : '';
  console.log(
    `[export] load it with transformers: AutoModelForCausalLM.from_pretrained('${out}'${remote}) and AutoTokenizer.from_pretrained('${out}'${remote})`,
  );
  console.log(`[export] or with the PyTorch package: NsaLlamaForCausalLM.from_pretrained('${out}') (pip install ./python)`);
  return 0;
}

runMain(main, { stack: false });
