"""Test doubles for users' own tests too: a loopback model server (stubserver), and replay
servers for the DOI registries (doi_replay) and the title search (title_search_replay), which
share their serving part (loopback).

May import: doi (the registry replay serves its recordings).
"""
