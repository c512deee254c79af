"""Knowledge stores: the SQLite archive (and, later, indexes and caches)."""
