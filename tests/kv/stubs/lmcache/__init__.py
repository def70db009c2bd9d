"""Interface stub of LMCache (tests/kv/stubs/README.md); not the real package."""
__version__ = "0.5.6"
STRATA_STUB = True
