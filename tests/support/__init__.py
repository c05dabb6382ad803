"""Helpers shared by test tiers (real external components, started and stopped by the tests)."""
