"""Facts: the values of the Kernwerte as records (parsing, concepts, comparison, lookup for value questions).

Modules in call order: ``periods`` (years and periods a value holds for), ``amounts`` (amount and unit out of a
cell), ``sentences`` (values stated in prose), ``extract`` (the facts of one entry: table cells, "Key: value"
bullets, value sentences), ``concepts`` (what a value measures, as a comparable key), ``tiers`` (rows of
staged tables: ranges of service years, kilometres or income), ``alike`` (values written otherwise: durations, bands,
bases, circumstances, table layouts), ``compare`` (same fact, conflict, outdated; near matches by embedding),
``case`` (the case a question tells before it asks), ``phrasing`` (everyday words of a question written as the
rows' words), ``question`` (a value question parsed: its words, period,
basis, bounds), ``sides`` (the party or the side of an event a question asks for), ``pools`` (the words a fact
answers with; the candidates narrowed), ``lookup`` (value questions matched to facts), ``shortlist`` (the entries a value question needs, over the whole base), ``coverage`` (years still missing, facts without a
year).
"""
