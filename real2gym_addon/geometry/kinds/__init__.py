"""The shape kinds, one module each; :mod:`..shape_kinds` gathers their entries into the table."""
