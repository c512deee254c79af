"""Skills and the progressive-disclosure gateway.

``models`` is the contract (Skill, tiers, guidance, context). ``registry`` holds
ops, domains and resources with inherited scopes and a version hash;
``search``/``text`` rank them (BM25F); ``hooks``/``hooks_builtin`` run around
prompts and tool calls; ``gateway`` offers the verbs a model sees (search,
describe, execute, batch) and ``executor`` exposes them to the agent loop;
``builtin*`` register the nine agents' skills.
"""
