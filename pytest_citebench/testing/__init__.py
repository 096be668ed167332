"""Test doubles for users' own tests too: a loopback model server and DOI-registry replay.

May import: doi (the registry replay serves its recordings).
"""
