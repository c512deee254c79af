"""Ranking ops for the gateway's ``search``.

- ``bm25``: field-weighted BM25 (BM25F) over skills, ``SkillIndex``.
- ``expansion``: query expansion (unknown-word fallback, pseudo-relevance feedback).
- ``embedding``: an optional dense stage fused with BM25.
"""
