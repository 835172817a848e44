// The Hugging Face custom code of an export that Llama cannot express (NSA, or a model option Llama
// has no field for): the PyTorch package's own sources (python/nsa_playground), copied as they are, so
// the exported directory and the package run one implementation. modeling_nsa_playground.py and
// configuration_nsa_playground.py wrap the package's model as a PreTrainedModel / PretrainedConfig;
// the rest are what they import, relatively (transformers copies a module's relative imports from
// the same directory). tests/export/code-files.test.ts checks that this list is that closure.
import config from '../../../python/nsa_playground/config.py?raw';
import configuration from '../../../python/nsa_playground/configuration_nsa_playground.py?raw';
import dsa from '../../../python/nsa_playground/dsa.py?raw';
import exportDir from '../../../python/nsa_playground/export_dir.py?raw';
import model from '../../../python/nsa_playground/model.py?raw';
import modeling from '../../../python/nsa_playground/modeling_nsa_playground.py?raw';
import nsa from '../../../python/nsa_playground/nsa.py?raw';
import optim from '../../../python/nsa_playground/optim.py?raw';
import safetensorsIo from '../../../python/nsa_playground/safetensors_io.py?raw';

/** config.json's auto_map: the classes AutoConfig and AutoModelForCausalLM load (trust_remote_code=True). */
export const AUTO_MAP = {
  AutoConfig: 'configuration_nsa_playground.NsaPlaygroundConfig',
  AutoModelForCausalLM: 'modeling_nsa_playground.NsaPlaygroundForCausalLM',
} as const;

export const CUSTOM_ARCHITECTURE = 'NsaPlaygroundForCausalLM';
export const CUSTOM_MODEL_TYPE = 'nsa_playground';

/** The custom-code files by name (each the package file of the same name). */
export const CODE_FILES: Readonly<Record<string, string>> = {
  'configuration_nsa_playground.py': configuration,
  'modeling_nsa_playground.py': modeling,
  'config.py': config,
  'model.py': model,
  'nsa.py': nsa,
  'dsa.py': dsa,
  'export_dir.py': exportDir,
  'optim.py': optim,
  'safetensors_io.py': safetensorsIo,
};
