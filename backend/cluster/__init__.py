"""Engineer pipelines on a Ray cluster (``[orchestration] backend = "ray"``).

Each engineer node of an approved plan runs as a whole pipeline in a Ray task, in a
checkout of its own fetched through git (``git_handoff``: the session's working tree
snapshotted to a base ref, the worker's result pushed to a result ref and applied by
the driver exactly once). ``ray_pipelines`` is the driver's half, ``worker_pipeline``
the worker's, ``ray_connection`` the only place Ray is imported and connected, and
``question_relay`` carries a worker's questions (approvals in ``ask`` mode) to the
driver's QuestionBoard and its answers back. Importing this package loads no Ray.
"""
