"""The machinery of a full code index build, apart from what the index stores.

- ``workers``: :func:`prepared_in_workers`, files read and parsed by ``python -I``
  child processes while the building thread writes.
- ``batch_writer``: :class:`BatchWriter`, an empty index filled in a few big
  statements per batch on a helper thread while the building thread parses.

Nothing here imports the index's own modules: what to run in a worker and what rows
to write come in as plain functions and values.
"""
