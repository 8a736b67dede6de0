"""The browsing pages: see apps.py."""
