"""The typed result documents: each kind a frozen dataclass built once, never edited, written by
the store as `to_json()` gives it (the layout of its file, key order included) and read back by
`from_json`; the emulator's records (intervals, exact-check lines) likewise. Outside the store
and these readers, no code reads a document by a string key, the views included
(tests/python/test_document_reads.py)."""
