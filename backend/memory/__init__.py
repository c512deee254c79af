"""Agent memory: how full each agent's context is, its checkpoints and its compaction.

The seed's "Agent Memory Management": every role meters its context against its
model's window, writes role-shaped checkpoints to the chronicle at its thresholds and
compacts older turns into a summary, keeping the task's verbatim prompt.
"""
