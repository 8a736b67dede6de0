"""Bringing agents' files into the index: see apps.py."""
