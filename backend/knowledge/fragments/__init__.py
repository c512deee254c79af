"""The Academic's library: small markdown fragments of guidance, and their answers.

The built-in fragments are data in ``builtin/*/*.md`` (errors, performance,
security, testing, toolchains); the user's folders are added to them.

- ``library``: :class:`FragmentLibrary`, the built-in and user fragments, kept fresh.
- ``fragment``: a fragment, its YAML frontmatter, and how to read one.
- ``index``: the inverted useWhen/keyword index behind ``index`` mode.
- ``match``: scoring fragments against a query.
- ``models``: what a library query returns, and its errors.
- ``render``: markdown for the query modes, excerpted to a budget.
- ``answers``: the Academic's answer when no model is configured.
- ``watch``: which files are fragments, and the watcher marking folders stale.
"""
