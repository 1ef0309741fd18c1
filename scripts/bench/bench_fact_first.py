"""Facts before the model: with a real chat model and "Erklärung des Modells nach den Werten" on, when do the
fact lines and the model's first token reach the caller? Run in ``odoo-bin shell`` (rolled back).

    scripts/bench/run.sh fact-first URL [DB]   (URL: an Ollama API with multilingual-e5-small and the chat
                                                 model, e.g. scripts/local_model.sh; DB default pv_kb_bakeoff,
                                                 made by scripts/bakeoff_demo.sh --prepare)

Each value question is asked through ``pv.kb.agent._ask`` with ``on_delta``: the time of the first piece
holding the fact lines and the time of the first piece of the model's explanation are taken from the start of
the question. Settings: BENCH_CHAT_MODEL (qwen2.5-coder:1.5b), BENCH_ANSWER_MODE (selection), num_ctx 4096.
"""
import os
import time

env = env  # noqa: F821 - provided by `odoo-bin shell`
QUESTIONS = ["GFB 2025?", "Wie hoch ist der Verkehrsabsetzbetrag 2025?", "DB Satz 2025?",
             "Kommunalsteuer wieviel Prozent?", "Wie hoch ist das Taggeld bei Inlandsdienstreisen 2025 pro Tag?"]
chat_model = os.environ.get("BENCH_CHAT_MODEL", "qwen2.5-coder:1.5b")
overrides = {"ollama_url": os.environ["BENCH_URL"], "embedding_model": "multilingual-e5-small",
             "query_prefix": "query: ", "passage_prefix": "passage: ", "chat_model": chat_model,
             "answer_mode": os.environ.get("BENCH_ANSWER_MODE", "selection"), "answer_modes": "",
             "num_ctx": 4096, "fact_answers": True, "fact_explain": True, "answer_time_limit": 600,
             "read_timeout": 600}
settings = env["pv.kb.settings"]._get(overrides)
agent = env["pv.kb.agent"]
print(f"chat model {chat_model} at {overrides['ollama_url']}; facts first, the model's explanation after them")
print("| question | fact lines after | first model token after | whole answer | answered from facts |")
print("|---|---|---|---|---|")
for question in QUESTIONS:
    marks = {}
    t0 = time.monotonic()

    def on_delta(text, marks=marks, t0=t0):
        if not text:
            return
        now = (time.monotonic() - t0) * 1000
        if "Aus den Kernwerten" in text and "facts" not in marks:
            marks["facts"] = now
        elif "facts" in marks and text.strip() and "model" not in marks:
            marks["model"] = now

    result = agent._ask(question, settings=settings, on_delta=on_delta)
    total = (time.monotonic() - t0) * 1000

    def ms(key, marks=marks):
        return f"{marks[key]:,.0f} ms" if key in marks else "–"

    print(f"| {question} | {ms('facts')} | {ms('model')} | {total:,.0f} ms | {result.from_facts} |")
env.cr.rollback()
