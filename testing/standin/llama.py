"""An optional real chat model for a local trial: a GGUF file run by llama-cpp-python."""
from __future__ import annotations

import os
import threading
from typing import Iterator


class LlamaBackend:
    """A real chat model on the CPU: a GGUF file run by llama-cpp-python (optional, for a local trial).

    Served as ``NAME=llama:/path/model.gguf``; loaded once on first use. Streams the model's own tokens.
    """

    def __init__(self, path: str, n_ctx: int = 8192) -> None:
        self.path, self.n_ctx = path, n_ctx
        self._llm = None
        self._lock = threading.Lock()

    def stream(self, messages: list[dict], options: dict, fmt=None) -> Iterator[str]:
        """The model's tokens; ``fmt`` (Ollama's ``format``: a JSON schema or "json") constrains the output
        with llama.cpp's grammar built from that schema."""
        extra = {}
        if isinstance(fmt, dict):
            extra["response_format"] = {"type": "json_object", "schema": fmt}
        elif fmt == "json":
            extra["response_format"] = {"type": "json_object"}
        with self._lock:   # one generation at a time, like a single Ollama runner
            if self._llm is None:
                from llama_cpp import Llama  # optional dependency, imported only when used
                self._llm = Llama(model_path=self.path, n_ctx=self.n_ctx, n_threads=os.cpu_count() or 2,
                                  verbose=False)
            chunks = self._llm.create_chat_completion(
                messages=[{"role": m.get("role", "user"), "content": str(m.get("content") or "")} for m in messages],
                temperature=float(options.get("temperature", 0.1)), max_tokens=int(options.get("num_predict", 512)),
                stream=True, **extra)
            for chunk in chunks:
                piece = chunk["choices"][0].get("delta", {}).get("content")
                if piece:
                    yield piece
