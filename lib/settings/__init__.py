"""The settings of pv_kb, each declared once (``table``): reading, validation, the form fields and the snapshot."""
