"""The answer engine: from retrieved entries to a grounded, checked answer. Pure Python, no Odoo.

The agent's pipeline (``models/pv_kb_agent.py``) uses the modules in this order:

1. ``stages`` — the optional model steps around retrieval (query rewriting before it, reranking after it),
   run without a database connection;
2. ``gate`` — refuse before generation when the retrieval evidence is clearly empty, the subject unknown, or
   the amount asked one of a payment the base gives no value for (``payments``);
3. ``conflicts`` — the ⚠ sides between the retrieved entries (from the fact comparison, ``lib/facts``);
4. ``fact_answer`` — a value question with a clear match in the fact table is answered in code, at once;
5. ``prompt`` — the ``<wissensbasis>`` context and the chat messages, each block cut to the question by
   ``focus`` and sized to the model's window;
6. ``respond`` — hands the prepared question to its answer mode (``modes/``: ``text`` with ``freetext``,
   ``structured`` with ``structured``, ``structured_checks`` and ``structured_render``, ``selection`` with
   ``selection``, ``selection_repair`` and ``scope``; ``modes/common`` holds the model call they share and the registry the
   policy which chat model answers in which mode), without touching the database;
7. ``validation`` — checks in code and the note for one regeneration, using ``citations`` (``[id]``
   extraction, refusal detection, ids not retrieved removed) and ``values`` (German amounts, percentages,
   counts compared with the cited source); ``outcome`` — what the user sees when checks fail (never a
   wrong figure as prose);
8. ``conflicts`` again — the visible ⚠ note when the answer dropped a side; ``links`` — only links that occur
   in the cited blocks stay;
9. ``extractive`` — the Notbetrieb answer (quoted passages) when no model is available;
10. ``parts`` — the answers to the parts of a question that asks two things (``lib/search/parts.py``), merged
    into one, each part under its own heading.

``types`` holds the data passed between them (ContextBlock, Conflict, Violation, Validation,
PreparedQuestion, AgentAnswer, the warning codes, the refusal sentence). Follow-up rewriting runs before
retrieval (``lib/search/followup.py``); Markdown blocks, folding and stemming live in ``lib/text``.
"""
