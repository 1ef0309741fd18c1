"""Token arithmetic for Ollama requests, without the model's tokenizer: estimates and signs of cut input.

Ollama cuts what does not fit into the model's context silently; these functions tell when it most
likely did. Pure Python, no Odoo.

Prompts (see :func:`is_truncated`): Ollama only reports how many prompt tokens it evaluated
(``prompt_eval_count``). The caller passes its own estimate (``expected_prompt_tokens``, e.g. from
:func:`estimate_tokens`); when that estimate is close to or above the window (>= 90 % of ``num_ctx``)
and the server evaluated clearly fewer tokens (< 80 % of the estimate), the prompt most likely did not
fit and the client's ``ChatResult`` carries ``truncated=True``. Known limit: Ollama does not count
prompt tokens served from its KV cache, so a repeated long prompt can also look "short"; the 90 % gate
keeps this to prompts that are near the window anyway, where a warning is worth having.

Embeddings (see :func:`texts_over_context`): ``/api/embed`` cuts each input to the model's context
(``truncate: true``) and reports one ``prompt_eval_count`` for the whole batch. That count, spread over
the batch's texts by length, gives each text's size in the model's own tokens; a text at or above the
model's context length (``<arch>.context_length`` of ``/api/show``) was probably cut. The client lists
the indices in ``EmbedResult.truncated`` (also logged at INFO).
"""
from __future__ import annotations

import math

#: German text averages about 3.5 characters per token for the tokenizers of
#: current open models (long compounds and umlauts cost more than English).
CHARS_PER_TOKEN = 3.5

#: Truncation gates, see the module docstring.
TRUNCATION_WINDOW_SHARE = 0.9
TRUNCATION_EVAL_SHARE = 0.8


def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: characters / 3.5, rounded up.

    Good enough for German prose to size a prompt against ``num_ctx``; it is
    an estimate, not the model's tokenizer.
    """
    if not text:
        return 0
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def is_truncated(prompt_eval_count: int, expected_prompt_tokens: int | None,
                 num_ctx: int) -> bool:
    """True when the server evaluated clearly fewer tokens than a prompt that
    was about as large as the context window (see module docstring)."""
    if not expected_prompt_tokens or num_ctx <= 0:
        return False
    if expected_prompt_tokens < TRUNCATION_WINDOW_SHARE * num_ctx:
        return False
    return prompt_eval_count < TRUNCATION_EVAL_SHARE * expected_prompt_tokens


def texts_over_context(texts: list[str], prompt_eval_count: int, context_tokens: int | None) -> list[int]:
    """Indices of ``texts`` that probably reached the model's context and were cut.

    The batch's ``prompt_eval_count`` is spread over its texts by length; a text
    whose share is at least ``context_tokens`` counts (a cut text was evaluated
    with exactly the context, so the share of a batch of one equals it).
    """
    total_chars = sum(len(t) for t in texts)
    if not context_tokens or context_tokens <= 0 or prompt_eval_count <= 0 or not total_chars:
        return []
    per_char = prompt_eval_count / total_chars
    return [i for i, text in enumerate(texts) if len(text) * per_char >= context_tokens]

