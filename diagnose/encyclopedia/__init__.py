"""The code for ``kb/``: entries, their validator, the vector index and its embedding, and retrieval."""
