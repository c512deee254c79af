"""Ranking ops for the gateway's ``search``.

- ``bm25``: field-weighted BM25 (BM25F) over skills, ``SkillIndex``.
- ``expansion``: query expansion (unknown-word fallback, pseudo-relevance feedback).
- ``embedding``: the dense stage fused with BM25 (on when the model is installed).
- ``embedding_texts``: what the embedding model reads of an op or a resource.
- ``embedding_model``: loading the sentence embedding model from local files only.
- ``embedding_numpy``: all-MiniLM-L6-v2's forward pass in numpy (the default, no torch),
  with ``embedding_tokens`` (its WordPiece tokenizer) and ``embedding_weights`` (its
  ``.safetensors`` file read by hand).
"""
