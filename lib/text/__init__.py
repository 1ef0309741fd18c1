"""The ground floor: German words (folding, stems, stopwords), Markdown blocks and one-line prompt helpers.

Modules: ``german`` (folding, tokens, light stemming, stopwords), ``md_blocks`` (paragraphs, tables, sentences),
``untrusted`` (YAML without aliases, bounded quotes in messages, refused characters),
``lines`` (one line of prompt text, tags neutralised), ``numbers`` (figures written in words shown in
digits), ``i18n`` (marks texts the UI shows translated), ``countries`` (the states other than Austria a
question may name). Imports
nothing of pv_kb.
"""
