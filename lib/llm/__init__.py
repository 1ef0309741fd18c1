"""Talking to the model servers: the Ollama and OpenAI-compatible clients, server lists, transport, errors, tokens.

Modules in call order: ``servers`` (several servers per role: failover, load spreading, cool-down), ``client``
(Ollama: embed, chat, show, version; gated origins only), ``openai_client`` (the same interface over the OpenAI
API, plus rerank), ``transport`` (HTTP with cancellation and bounded reads), ``errors`` (German messages, secrets
redacted), ``tokens`` (estimates and context accounting), ``model_json`` (lenient reading of a model's JSON).
"""
