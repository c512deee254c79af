"""The Guide's in-process message bus, sharded by session.

- ``bus``: ``Bus``, request/reply and delivery; ``inbox``: one bounded priority inbox
  per (session, agent); ``consumer``: the loops that drain inboxes into handlers.
- ``retry`` / ``dead_letter``: transient failures retried, then kept for inspection.
- ``breakers`` / ``health``: stop feeding a failing agent; report stuck or crashed ones.
- ``flow_log``: what moved where and how long it took; ``errors``: the typed errors.
"""
