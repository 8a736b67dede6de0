"""Debugging a run of an agent: see apps.py."""
