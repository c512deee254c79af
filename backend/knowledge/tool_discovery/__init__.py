"""Tool discovery: which linters, formatters, type checkers and test tools a workspace uses.

- ``discovery``: :class:`ToolDiscovery`, the three tiers put together, cached
  per workspace and invalidated by file changes.
- ``scan``: one tier 1 pass over the workspace's files, merged into tools.
- ``rules``: tier 1 rules: what each kind of file says about its tools.
- ``editorconfig``: the ``.editorconfig`` files that apply, and the formatters
  they configure.
- ``catalog``: what discovery knows about each tool (commands, packages, config
  files, pre-commit hooks).
- ``files``: which files discovery reads, read confined to the workspace.
- ``probe``: how a tool is run and installed in this project; ``--version`` of a
  tool on PATH outside the workspace.
- ``installed``: where a tool is installed and its version, running nothing of the
  workspace's (a project-local tool's version comes from its package metadata).
- ``tiers``: tiers 2 and 3: the Academic's recommendation and the user's choice.
- ``defaults``: the language defaults when a project configures no tool.
- ``models``: the protocol's requests, responses, tools and options.
- ``format``: discovery results as Markdown.
"""
