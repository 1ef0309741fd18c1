"""The curator's cockpit: health findings of the base and gaps in what users ask.

Modules: ``health`` (findings from plain entry data), ``gaps`` (refused questions grouped by topic).
"""
