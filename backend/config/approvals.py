"""The ``[approvals]`` config section: the default approval mode and standing rules.

::

    [approvals]
    mode = "ask"                          # read-only | ask | auto-edit | auto
    allow = ["pytest *", "git status"]    # commands that never ask
    deny = ["rm -rf *", "git push*"]      # commands that are always refused

The mode names and what they mean live here, below every part that reads them
(the settings, the skill context, the approval gate in :mod:`backend.approvals`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.config.choices import MODE_NAMES, ApprovalMode


class ApprovalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ApprovalMode = ApprovalMode.ASK
    # A rule is a command (`git status`, matched whole) or a prefix pattern ending in
    # `*` (`pytest *`); deny rules win over allow rules and over every mode.
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @field_validator("allow", "deny")
    @classmethod
    def _no_blank_rules(cls, rules: list[str]) -> list[str]:
        cleaned = [rule.strip() for rule in rules]
        if any(not rule or rule == "*" for rule in cleaned):
            raise ValueError("a rule must name a command; '' and '*' are not rules")
        return cleaned


__all__ = ["MODE_NAMES", "ApprovalMode", "ApprovalSettings"]
