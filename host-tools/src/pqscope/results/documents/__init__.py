"""The typed result documents: each kind a frozen dataclass built once, never edited, written by
the store as `to_json()` gives it (the layout of its file, key order included) and read back by
`from_json`; the emulator's records (intervals, exact-check lines) likewise. Outside the store,
these readers and the views, no code reads a document by a string key
(tests/python/test_document_reads.py)."""
