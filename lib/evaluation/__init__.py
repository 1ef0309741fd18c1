"""Measuring the engine: gold-set format, the tuning/test protocol, retrieval and answer metrics, the bake-off.

Modules: ``goldset`` (reading gold sets), ``protocol`` (split into tuning and test parts), ``metrics``
(Recall@k, MRR, citation precision, refusals, latency), ``bakeoff`` (answer runs compared).
"""
