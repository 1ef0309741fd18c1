"""Talking to the model server: the Ollama client and its transport, errors, token estimates and model JSON.

Modules in call order: ``client`` (embed, chat, show, version; gated origins only), ``transport`` (HTTP with
cancellation and bounded reads), ``errors`` (German messages, secrets redacted), ``tokens`` (estimates and
context accounting), ``model_json`` (lenient reading of a model's JSON).
"""
