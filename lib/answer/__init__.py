"""The answer engine: from retrieved entries to a grounded, checked answer. Pure Python, no Odoo.

The agent (``models/pv_kb_agent.py``) calls the modules in this order:

1. ``gate`` — refuse before generation when the retrieval evidence is clearly empty;
2. ``conflicts`` — Kernwerte conflicts between the retrieved entries (:func:`detect_conflicts`);
3. ``prompt`` — the ``<wissensbasis>`` context and the chat messages (:func:`build_messages`), sized to
   the model's window by ``freetext.context_budget``; in the structured mode ``structured`` gives the
   system prompt and the JSON schema sent as Ollama's ``format``;
4. (the model answers)
   free text: ``freetext`` removes echoed instructions and tag fragments and attaches a citation to a
   claim whose values stand in exactly one retrieved entry; structured: ``structured`` parses the JSON,
   ``structured_checks`` checks each statement (ids, verbatim quote, values, Stand) and
   ``structured_render`` writes the answer itself;
5. ``validation`` — checks in code (:func:`validate_answer`) and the note for one regeneration
   (:func:`strict_instruction`); ``outcome`` — the status rule: what the user sees when checks fail
   (:func:`outcome.decide`: never a wrong figure as prose); it uses
6. ``citations`` — ``[id]`` extraction and refusal detection, and removes ids that were not
   retrieved from what is shown (:func:`strip_unknown_citations`);
7. ``values`` — German amounts, percentages and counts, compared with the cited source;
8. ``conflicts`` again — the visible ⚠ note when the answer dropped a side (:func:`add_conflict_note`);
9. ``extractive`` — the Notbetrieb answer (quoted passages) when no model is available.

``respond`` runs steps 4–9 for a question the agent prepared (steps 1–3, in a short transaction):
:func:`respond.respond` hands it to its answer mode, which calls the model and checks its answer without
touching the database, so the chat panel's stream holds no connection while the model generates. The modes
are plug-ins in ``modes/`` (``text``, ``structured``, ``selection``; ``common`` holds the model call they
share), registered in one registry that also holds the policy which chat model answers in which mode.

``types`` holds the data passed between them (ContextBlock, Conflict, EntryFacts, Violation, Validation,
PreparedQuestion, AgentAnswer, the warning codes, the refusal sentence). Follow-up rewriting runs before retrieval
and lives in ``lib/search/followup.py``; Markdown blocks in ``lib/text/md_blocks.py``; word folding,
stemming and stopwords in ``lib/text/german.py``.
"""
