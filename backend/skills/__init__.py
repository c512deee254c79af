"""Skills: typed operations, the registry that holds them, and the gateway that serves them.

Here: ``models`` (Skill, tiers, guidance, SkillContext: the contract),
``registry`` (ops, domains and resources with inherited scopes and a version
hash), ``envelopes`` (what every verb returns, typed errors and their codes),
``call_flags`` (the dry-run and idempotency flags a handler reads from
``ctx.extra``), ``session_scope`` (who may read which session).
Rooms: ``search`` ranks ops, ``hooks`` run around prompts and tool calls,
``gateway`` serves the verbs a model sees (search, describe, execute, batch),
``builtin`` declares the nine agents' skills.
"""
