"""Helpers shared by the test tiers: fake clocks and a poll-until wait (no tests of their own)."""
