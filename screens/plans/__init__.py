"""The screens of a session's plans: the plan review dialog, and the DAG view with its
pipeline pane."""
