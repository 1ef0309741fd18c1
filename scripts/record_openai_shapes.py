#!/usr/bin/env python3
"""Record one real reply of each OpenAI-compatible endpoint the addon uses, as test data for the stand-in's
contract test (tests/lib/test_openai_contract.py).

    python scripts/record_openai_shapes.py --chat-url http://127.0.0.1:11600 --chat-model qwen2.5-coder:1.5b \\
        [--embed-url http://127.0.0.1:11601 --embed-model NAME] [--out tests/lib/data/openai_shapes.json]

Sends: GET /v1/models; POST /v1/chat/completions blocking and streamed (a few tokens), once with a JSON schema
as ``response_format`` in each style (whether the server accepts it is recorded too); POST /v1/embeddings when
an embedding server is given; one refused request (the error shape). Vectors are cut to their first 4 numbers
(their length is kept), ids and times stay as the server sent them. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import urllib.error
import urllib.request

SCHEMA = {"type": "object", "properties": {"antwort": {"type": "string"}}, "required": ["antwort"]}
MESSAGES = [{"role": "user", "content": "Antworte mit einem Wort: Wie heißt die Hauptstadt Österreichs?"}]


def call(url: str, path: str, body: dict | None = None, stream: bool = False, timeout: float = 300):
    """(status, decoded JSON or the list of SSE data payloads)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url.rstrip("/") + path, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if stream:
                events = []
                for raw in resp:
                    line = raw.decode("utf-8").strip()
                    if line.startswith("data:"):
                        payload = line[5:].strip()
                        events.append(payload if payload == "[DONE]" else json.loads(payload))
                return resp.status, {"content_type": resp.headers.get("Content-Type"), "events": events}
            return resp.status, json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")
        try:
            return exc.code, json.loads(text)
        except ValueError:
            return exc.code, text[:500]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chat-url", required=True)
    parser.add_argument("--chat-model", required=True)
    parser.add_argument("--embed-url")
    parser.add_argument("--embed-model")
    parser.add_argument("--server", default="llama-cpp-python", help="what answered, for the record")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[1]
                                             / "tests" / "lib" / "data" / "openai_shapes.json"))
    args = parser.parse_args(argv)
    chat = {"model": args.chat_model, "messages": MESSAGES, "max_tokens": 6, "temperature": 0}
    record = {"server": args.server, "replies": {}}
    replies = record["replies"]
    replies["models"] = call(args.chat_url, "/v1/models")
    replies["chat"] = call(args.chat_url, "/v1/chat/completions", chat)
    replies["chat_stream"] = call(args.chat_url, "/v1/chat/completions",
                                  dict(chat, stream=True, stream_options={"include_usage": True}), stream=True)
    replies["chat_json_schema"] = call(args.chat_url, "/v1/chat/completions", dict(chat, max_tokens=16, response_format={
        "type": "json_schema", "json_schema": {"name": "antwort", "schema": SCHEMA}}))
    replies["chat_json_object"] = call(args.chat_url, "/v1/chat/completions", dict(chat, max_tokens=16, response_format={
        "type": "json_object", "schema": SCHEMA}))
    replies["refused"] = call(args.chat_url, "/v1/chat/completions", {"model": args.chat_model, "messages": "kaputt"})
    if args.embed_url:
        status, body = call(args.embed_url, "/v1/embeddings", {"model": args.embed_model or "",
                                                               "input": ["passage: Abfertigung", "query: Urlaub"],
                                                               "encoding_format": "float"})
        if isinstance(body, dict):
            for item in body.get("data") or []:
                vec = item.get("embedding") or []
                item["embedding_length"] = len(vec)
                item["embedding"] = vec[:4]
        replies["embeddings"] = [status, body]
    pathlib.Path(args.out).write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for name, (status, _body) in replies.items():
        print(f"{name}: HTTP {status}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
