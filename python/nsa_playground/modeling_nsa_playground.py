"""The Hugging Face model class of an nsa-playground export that Llama cannot express: the package's
own model (model.py, nsa.py: the one implementation, copied beside this file into every such export)
behind PreTrainedModel and GenerationMixin, so that

    AutoModelForCausalLM.from_pretrained(dir, trust_remote_code=True)

loads model.safetensors (the same names: model.embed_tokens.weight, model.layers.{i}.…) and
`generate()` works. There is no key/value cache: every generated token runs the whole sequence again
(exact, and as fast as the model's small sizes need). A DSA model runs in the phase of its export's last
training step (docs/dsa-spec.md section 11). Padding is not supported: an attention_mask with
a zero is refused (give sequences of equal length, or one at a time).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import GenerationMixin, PreTrainedModel
from transformers.modeling_outputs import CausalLMOutputWithPast

from .configuration_nsa_playground import NsaPlaygroundConfig
from .model import NsaLlamaForCausalLM


class NsaPlaygroundForCausalLM(PreTrainedModel, GenerationMixin):
    config_class = NsaPlaygroundConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    _no_split_modules = ["DecoderLayer"]
    _supports_cache_class = False

    def __init__(self, config: NsaPlaygroundConfig):
        super().__init__(config)
        lm = NsaLlamaForCausalLM(config.model_config())
        # DSA: the phase of the export's last optimizer step (config.json's state.step), as the
        # WebGPU trainer's evaluation runs it: dense attention until the warm-up is over.
        state = getattr(config, "state", None)
        lm.set_dsa_steps_done(int(state.get("step", 0)) if isinstance(state, dict) else 0)
        # The parameters live once, under `model.` (model.safetensors' names); the package's model
        # (kept outside the module tree) runs them.
        self.model = lm.model
        object.__setattr__(self, "_lm", lm)
        self.post_init()

    def get_input_embeddings(self) -> torch.nn.Embedding:
        return self.model.embed_tokens

    def set_input_embeddings(self, value: torch.nn.Embedding) -> None:
        self.model.embed_tokens = value

    def forward(
        self,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> CausalLMOutputWithPast:
        """input_ids int64 [B, T] → logits [B, T, V]; labels (−100 not scored) give the mean
        next-token cross-entropy, shifted as Hugging Face causal LMs do."""
        if attention_mask is not None and not bool(attention_mask.bool().all()):
            raise ValueError("attention_mask: holds a 0; this model has no padding support (give sequences of equal length)")
        logits = self._lm(input_ids)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), labels[:, 1:].flatten(), ignore_index=-100)
        return CausalLMOutputWithPast(loss=loss, logits=logits)

    def prepare_inputs_for_generation(self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None, **kwargs):
        # No cache: the whole sequence every step.
        return {"input_ids": input_ids, "attention_mask": attention_mask}

    def selections(self):
        """What each NSA layer kept in the last forward of the package's model with keep=True."""
        return self._lm.selections()
