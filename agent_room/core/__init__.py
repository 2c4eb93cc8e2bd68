"""The domain core: pure models and policies, no I/O.

May import the standard library and pydantic only (enforced by import-linter and by a
test that imports the core in a fresh process). Submodules stay importable one by one so
that the hook path can use the stdlib-only ones without loading pydantic.
"""
