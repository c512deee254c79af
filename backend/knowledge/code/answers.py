"""The Librarian's answers that need no model, as markdown for the transcript.

A LOCATE answer is exact: file:line locations straight from the index. PATTERN,
EXPLAIN and GENERAL questions need synthesis; without a model the answer is the
evidence the index holds, ranked, and says so. A model's answer reused from the
cache says when it was given, by which model, and that nothing it drew on changed.
"""

from __future__ import annotations

from backend.knowledge.code.evidence import Evidence, ModelAnswer, Snippet
from backend.knowledge.code.index_queries import SymbolHit
from backend.knowledge.code.intent_cache import Intent

MAX_SNIPPET_LINES = 12


def _where(evidence: Evidence) -> str:
    notes = [f"{evidence.indexed_files} files indexed"]
    if not evidence.complete:
        notes.append("indexing is still running, so this may be incomplete")
    if evidence.cached:
        notes.append("cached; the files involved have not changed since")
    return "_From the code index, no model used (" + "; ".join(notes) + ")._"


def _definition(hit: SymbolHit) -> str:
    owner = f" in `{hit.parent}`" if hit.parent else ""
    signature = f" — `{hit.signature.strip()}`" if hit.signature.strip() else ""
    return f"- `{hit.path}:{hit.line}` {hit.kind} `{hit.name}`{owner}{signature}"


def _snippet(s: Snippet) -> str:
    lines = s.text.splitlines() or [""]
    if len(lines) == 1:
        return f"- `{s.path}:{s.line}` {lines[0].strip()}"
    shown = lines[:MAX_SNIPPET_LINES]
    more = f"\n  … {len(lines) - len(shown)} more lines" if len(lines) > len(shown) else ""
    body = "\n".join(shown)
    return f"- `{s.path}:{s.line}`\n```\n{body}\n```{more}"


def render_locate(evidence: Evidence) -> str:
    subject = evidence.definitions[0].name if evidence.definitions else evidence.subject
    if evidence.definitions:
        count = len(evidence.definitions)
        head = f"**{subject}** is defined in {count} place{'s' if count > 1 else ''}:"
        lines = [head, *(_definition(h) for h in evidence.definitions[:12])]
        if count > 12:
            lines.append(f"- … and {count - 12} more")
        return "\n".join([*lines, "", _where(evidence)])
    lines = [f"No definition named **{subject}** is in the index."]
    if evidence.snippets:
        lines += ["", "It appears in the text here:", *(_snippet(s) for s in evidence.snippets)]
    else:
        lines.append("No file mentions it either; check the spelling, or whether it is ignored.")
    return "\n".join([*lines, "", _where(evidence)])


_HEADINGS = {
    Intent.PATTERN: "how **{s}** is done in this codebase",
    Intent.EXPLAIN: "what the code says about **{s}**",
    Intent.GENERAL: "what the code has on **{s}**",
}


def render_evidence(evidence: Evidence, *, no_model: str | None = None) -> str:
    """Ranked evidence for a question that needs synthesis. ``no_model`` says how to add one."""
    if evidence.intent is Intent.LOCATE:
        return render_locate(evidence)
    heading = _HEADINGS[evidence.intent].format(s=evidence.subject)
    lines: list[str] = []
    if no_model:
        lines.append(
            f"No language model is configured, so this is the evidence for {heading}, "
            "ranked by the index; it is not a summary."
        )
    else:
        lines.append(f"Evidence for {heading}:")
    if evidence.definitions:
        lines += ["", "Definitions:", *(_definition(h) for h in evidence.definitions[:6])]
    if evidence.snippets:
        lines += ["", "Where it shows:", *(_snippet(s) for s in evidence.snippets)]
    if not evidence.definitions and not evidence.snippets:
        lines += ["", "The index has nothing that matches; try other words or a symbol name."]
    lines += ["", _where(evidence)]
    if no_model:
        lines.append(no_model)
    return "\n".join(lines)


def render_cached_answer(answer: ModelAnswer) -> str:
    """A model's earlier answer, labelled as reused (the transcript shows local time)."""
    when = answer.answered_at.astimezone().strftime("%Y-%m-%d %H:%M")
    return (
        f"{answer.text}\n\n_Cached answer from {when} (model {answer.model}); "
        "the files it drew on have not changed since._"
    )
