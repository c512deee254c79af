"""Approved plans run: the plan desk wired into the engine (``plan_work``), the DAG run
by the Orchestrator's scheduler (``dag_work``, ``dag_nodes``, ``dag_notes``), engineer
nodes as pipelines (``pipeline_work``) and a killed task's edits put back before it runs
again (``task_rollback``)."""
