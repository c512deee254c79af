"""The archive shared by a team: who owns each session (``ownership``), other processes'
changes as they happen (``live_updates``), and copying a local archive in (``copy``)."""
