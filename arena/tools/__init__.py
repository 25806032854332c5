"""Harness-owned tools. They execute, and are logged, only in harness code."""
