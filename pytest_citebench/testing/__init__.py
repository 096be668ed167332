"""Test doubles for users' own tests too: a loopback model server and DOI-registry replay."""
