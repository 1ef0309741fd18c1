"""Finding the entries for a question: full text, compounds, dense and card lists fused, optional rewrite and rerank.

Modules in call order: ``instructions`` (sentences that speak to the assistant dropped from a question), ``followup``
(a follow-up made standalone), ``parts``
(a question that asks two things split into one question each), ``rewrite`` (model restates the question),
``compounds`` and ``fulltext`` (German full-text query with synonyms), ``known_words`` (is a word one of the
base's: the subject gate's test), ``entry_card`` (one card per entry),
``fusion`` and ``ranking`` (the recipe and its constants), ``rerank`` (model orders the best entries).
"""
