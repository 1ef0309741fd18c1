"""Personal data in questions: detectors, known names, the gate that masks them, and its scoring.

Modules in call order: ``detectors`` (SV-Nr., IBAN, e-mail, phone, …), ``names`` (known and titled names),
``gate`` (stable placeholders before retrieval, prompt, model and log), ``scoring`` (precision/recall for the bench).
"""
