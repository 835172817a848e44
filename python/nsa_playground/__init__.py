"""nsa-playground in PyTorch: the Llama-style NSA model of docs/nsa-spec.md, its exported directory
format (config.json, model.safetensors, optimizer.safetensors) and distributed training."""

from .config import ConfigError, GateAblation, ModelConfig, NsaConfig
from .export_dir import ExportFormatError, load_model, load_optimizer, read_config, save_directory
from .model import NsaLlamaForCausalLM
from .nsa import nsa_attention
from .optim import learning_rate, optimizer_step
from .safetensors_io import SafetensorsFormatError, read_safetensors, write_safetensors

from_pretrained = NsaLlamaForCausalLM.from_pretrained

__all__ = [
    "ConfigError",
    "ExportFormatError",
    "GateAblation",
    "ModelConfig",
    "NsaConfig",
    "NsaLlamaForCausalLM",
    "SafetensorsFormatError",
    "from_pretrained",
    "learning_rate",
    "load_model",
    "load_optimizer",
    "nsa_attention",
    "optimizer_step",
    "read_config",
    "read_safetensors",
    "save_directory",
    "write_safetensors",
]
