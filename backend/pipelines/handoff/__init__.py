"""The engineer pipeline's handoff at 95% context (the seed's "Pipeline Handoff").

``state``: the bundled state of the three roles (the seed's ``PipelineHandoff``),
built from a pipeline's shared context, and its text for the new pipeline's first
prompt. ``chain``: a task's chain of handoffs (index, user stop, user request) and
one handoff's steps: review, record, create the new pipeline; retried, then falling
back to summarise-and-compact.
"""
