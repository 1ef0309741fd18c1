"""Facts: the values of the Kernwerte as records (parsing, concepts, comparison, lookup for value questions)."""
