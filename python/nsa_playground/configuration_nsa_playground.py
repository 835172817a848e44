"""The Hugging Face configuration of an nsa-playground model that Llama cannot express (NSA attention,
a value head size other than the key's, or any model option Llama has no field for).

`npm run export` and this package write it into an exported directory beside `modeling_nsa_playground.py`
and the package's own model sources, so that `AutoConfig.from_pretrained(dir, trust_remote_code=True)`
reads config.json through it (config.json's `auto_map`). It keeps every field of config.json as it is;
`model_config()` is the package's validated model configuration (config.py), one set of rules for both.
"""

from __future__ import annotations

from transformers import PretrainedConfig

from .config import ModelConfig, parse_model_config


class NsaPlaygroundConfig(PretrainedConfig):
    """config.json of an nsa-playground export (every field kept, validated by `model_config()`)."""

    model_type = "nsa_playground"
    keys_to_ignore_at_inference = ["past_key_values"]

    def model_config(self) -> ModelConfig:
        """The package's model configuration; raises ConfigError naming config.json's field."""
        path = f"{getattr(self, '_name_or_path', '') or '.'}/config.json"
        return parse_model_config(self.to_dict(), path)
