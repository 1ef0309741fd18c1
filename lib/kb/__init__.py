"""The knowledge base on its way in: format, batch checks, ZIP guard, import plan, chunking, rendering, embedding.

Modules in call order: ``zip_guard`` (safe unpacking), ``format`` (front matter and body rules), ``batch``
(a whole batch checked), ``import_plan`` (what an apply changes), ``chunking`` (sections), ``rendering``
(entry HTML), ``embed_job`` (batches and limits of the embedding run); ``entry_facts`` (one entry's plain data for the
conflict and health checks).
"""
