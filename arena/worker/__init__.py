"""Adapter workers: run an adapter's legs in a subprocess, possibly in its own environment.

See docs/adapters.md for the protocol.
"""
