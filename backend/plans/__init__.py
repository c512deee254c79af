"""Plans: the DAG model the Architect writes and the Orchestrator runs, and its checks.

``models`` holds the seed's DAG schema as pydantic models (and which defaults apply
when); ``graph.validate_plan`` checks a plan as a graph and computes its layers;
``document`` reads a plan from JSON or YAML text or decoded data; ``validate_file``
backs `sylk plan validate FILE`; ``errors`` holds the typed errors, each listing
every problem found. The Architect's ops come later and build on these.
"""

from backend.plans.document import load_plan, load_plan_document, parse_plan, read_document
from backend.plans.errors import (
    DependencyCycleError,
    DuplicateNodeIdError,
    EmptyPlanError,
    ExecutionOrderError,
    MissingDependencyError,
    PlanDocumentError,
    PlanError,
    PlanFieldError,
    PlanFileNotFoundError,
    PlanProblem,
    PlanProblemsError,
    ProblemCode,
    SelfDependencyError,
    UnknownAgentError,
)
from backend.plans.graph import validate_plan
from backend.plans.models import (
    NodeContext,
    NodeMetadata,
    NodeRetry,
    Plan,
    PlanNode,
    PlanPolicy,
    PolicyRetry,
)
from backend.plans.validate_file import PlanReport, validate_file
from backend.plans.validated_plan import ValidatedPlan

__all__ = [
    "DependencyCycleError",
    "DuplicateNodeIdError",
    "EmptyPlanError",
    "ExecutionOrderError",
    "MissingDependencyError",
    "NodeContext",
    "NodeMetadata",
    "NodeRetry",
    "Plan",
    "PlanDocumentError",
    "PlanError",
    "PlanFieldError",
    "PlanFileNotFoundError",
    "PlanNode",
    "PlanPolicy",
    "PlanProblem",
    "PlanProblemsError",
    "PlanReport",
    "PolicyRetry",
    "ProblemCode",
    "SelfDependencyError",
    "UnknownAgentError",
    "ValidatedPlan",
    "load_plan",
    "load_plan_document",
    "parse_plan",
    "read_document",
    "validate_file",
    "validate_plan",
]
