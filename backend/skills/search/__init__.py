"""Ranking ops for the gateway's ``search``.

- ``bm25``: field-weighted BM25 (BM25F) over skills, ``SkillIndex``.
- ``expansion``: query expansion (unknown-word fallback, pseudo-relevance feedback).
- ``embedding``: an optional dense stage fused with BM25.
- ``embedding_texts``: what the embedding model reads of an op or a resource.
- ``embedding_model``: loading the sentence embedding model from local files only.
"""
